// JUnit Jupiter's timeouts for a run under the Bloatlens VM, scaled: the VM is slower than `java`,
// for which the timeouts were written. The runner turns JUnit's own timeouts off
// (junit.jupiter.execution.timeout.mode=disabled) and this extension, found by Jupiter's extension
// auto-detection, applies them instead, multiplied by `bloatlens.timeouts.factor`: a @Timeout on the
// method, else on its class (and the classes a @Nested class is nested in), else the
// junit.jupiter.execution.timeout.*.default parameters, as JUnit reads them. Same thread (interrupted
// when the time is up, as JUnit does) or a separate thread, as the @Timeout or
// junit.jupiter.execution.timeout.thread.mode.default says. Compiled against the project's Jupiter API
// (5.5 and later); `threadMode` (5.9) is read reflectively.

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.InvocationInterceptor;
import org.junit.jupiter.api.extension.ReflectiveInvocationContext;
import org.junit.platform.commons.support.AnnotationSupport;

public final class BloatlensTimeouts implements InvocationInterceptor {
    /** Invocations a timeout applied to (the runner reports them). */
    public static final AtomicLong timed = new AtomicLong();

    private static final String PREFIX = "junit.jupiter.execution.timeout.";
    private static final Pattern DURATION = Pattern.compile("(\\d+)\\s*(ns|μs|ms|s|m|h|d)?", Pattern.CASE_INSENSITIVE);
    private static ScheduledExecutorService scheduler;

    @Override
    public void interceptTestMethod(Invocation<Void> invocation, ReflectiveInvocationContext<Method> context,
            ExtensionContext extension) throws Throwable {
        timed(invocation, context, extension, "test", true);
    }

    @Override
    public void interceptTestTemplateMethod(Invocation<Void> invocation, ReflectiveInvocationContext<Method> context,
            ExtensionContext extension) throws Throwable {
        timed(invocation, context, extension, "testtemplate", true);
    }

    @Override
    public <T> T interceptTestFactoryMethod(Invocation<T> invocation, ReflectiveInvocationContext<Method> context,
            ExtensionContext extension) throws Throwable {
        return timed(invocation, context, extension, "testfactory", true);
    }

    @Override
    public void interceptBeforeAllMethod(Invocation<Void> invocation, ReflectiveInvocationContext<Method> context,
            ExtensionContext extension) throws Throwable {
        timed(invocation, context, extension, "beforeall", false);
    }

    @Override
    public void interceptBeforeEachMethod(Invocation<Void> invocation, ReflectiveInvocationContext<Method> context,
            ExtensionContext extension) throws Throwable {
        timed(invocation, context, extension, "beforeeach", false);
    }

    @Override
    public void interceptAfterEachMethod(Invocation<Void> invocation, ReflectiveInvocationContext<Method> context,
            ExtensionContext extension) throws Throwable {
        timed(invocation, context, extension, "aftereach", false);
    }

    @Override
    public void interceptAfterAllMethod(Invocation<Void> invocation, ReflectiveInvocationContext<Method> context,
            ExtensionContext extension) throws Throwable {
        timed(invocation, context, extension, "afterall", false);
    }

    /** A timeout as written: its value and unit, and whether it runs the method in a separate thread. */
    private static final class Written {
        final long value;
        final TimeUnit unit;
        final boolean separateThread;

        Written(long value, TimeUnit unit, boolean separateThread) {
            this.value = value;
            this.unit = unit;
            this.separateThread = separateThread;
        }

        @Override
        public String toString() {
            String label = unit.name().toLowerCase();
            if (value == 1 && label.endsWith("s")) {
                label = label.substring(0, label.length() - 1);
            }
            return value + " " + label;
        }
    }

    private <T> T timed(Invocation<T> invocation, ReflectiveInvocationContext<Method> context, ExtensionContext extension,
            String kind, boolean testable) throws Throwable {
        Written written = written(context, extension, kind, testable);
        long factor = extension.getConfigurationParameter("bloatlens.timeouts.factor").map(Long::parseLong).orElse(1L);
        if (written == null || written.value <= 0) {
            return invocation.proceed();
        }
        timed.incrementAndGet();
        long nanos = saturatingMultiply(written.unit.toNanos(written.value), factor);
        Method method = context.getExecutable();
        String message = signature(method) + " timed out after " + written + " (scaled " + factor
                + "× for the run under Bloatlens: " + Duration.ofNanos(nanos).toMillis() + " ms)";
        if (written.separateThread) {
            return inAnotherThread(invocation, nanos, message);
        }
        Thread thread = Thread.currentThread();
        AtomicBoolean fired = new AtomicBoolean();
        ScheduledFuture<?> interrupt = scheduler().schedule(() -> {
            fired.set(true);
            thread.interrupt();
        }, nanos, TimeUnit.NANOSECONDS);
        Throwable failure = null;
        T result = null;
        try {
            result = invocation.proceed();
        } catch (Throwable t) {
            failure = t;
        } finally {
            interrupt.cancel(false);
        }
        if (fired.get()) {
            Thread.interrupted();
            TimeoutException timeout = new TimeoutException(message);
            if (failure != null) {
                timeout.addSuppressed(failure);
            }
            throw timeout;
        }
        if (failure != null) {
            throw failure;
        }
        return result;
    }

    /** The invocation in a thread of its own, abandoned (interrupted) when the time is up. */
    @SuppressWarnings("unchecked")
    private static <T> T inAnotherThread(Invocation<T> invocation, long nanos, String message) throws Throwable {
        Object[] result = new Object[1];
        Throwable[] failure = new Throwable[1];
        Thread worker = new Thread(() -> {
            try {
                result[0] = invocation.proceed();
            } catch (Throwable t) {
                failure[0] = t;
            }
        }, "bloatlens-timeout-worker");
        worker.setDaemon(true);
        worker.start();
        long deadline = System.nanoTime() + nanos;
        for (long left = nanos; worker.isAlive() && left > 0; left = deadline - System.nanoTime()) {
            TimeUnit.NANOSECONDS.timedJoin(worker, left);
        }
        if (worker.isAlive()) {
            worker.interrupt();
            throw new TimeoutException(message);
        }
        if (failure[0] != null) {
            throw failure[0];
        }
        return (T) result[0];
    }

    /** The timeout JUnit would apply: the method's @Timeout, its class's (testable methods only), the defaults. */
    private static Written written(ReflectiveInvocationContext<Method> context, ExtensionContext extension, String kind,
            boolean testable) {
        Optional<Timeout> annotation = AnnotationSupport.findAnnotation(context.getExecutable(), Timeout.class);
        if (!annotation.isPresent() && testable) {
            for (Class<?> k = context.getTargetClass(); k != null && !annotation.isPresent(); ) {
                annotation = AnnotationSupport.findAnnotation(k, Timeout.class);
                k = AnnotationSupport.isAnnotated(k, Nested.class) ? k.getEnclosingClass() : null;
            }
        }
        boolean separateByDefault = extension.getConfigurationParameter(PREFIX + "thread.mode.default")
                .map(m -> m.trim().equalsIgnoreCase("SEPARATE_THREAD")).orElse(false);
        if (annotation.isPresent()) {
            Timeout t = annotation.get();
            return new Written(t.value(), t.unit(), separateThread(t, separateByDefault));
        }
        String[] keys = testable
                ? new String[] {kind + ".method.default", "testable.method.default", "default"}
                : new String[] {kind + ".method.default", "lifecycle.method.default", "default"};
        for (String key : keys) {
            Optional<String> value = extension.getConfigurationParameter(PREFIX + key);
            if (value.isPresent()) {
                Written w = parse(value.get(), separateByDefault);
                if (w != null) {
                    return w;
                }
            }
        }
        return null;
    }

    private static boolean separateThread(Timeout t, boolean byDefault) {
        try {
            Object mode = Timeout.class.getMethod("threadMode").invoke(t);
            String name = String.valueOf(mode);
            return name.equals("SEPARATE_THREAD") || (name.equals("INFERRED") && byDefault);
        } catch (ReflectiveOperationException e) {
            return byDefault; // before JUnit 5.9: every timeout runs in the same thread
        }
    }

    private static Written parse(String text, boolean separate) {
        Matcher m = DURATION.matcher(text.trim());
        if (!m.matches()) {
            return null;
        }
        long value = Long.parseLong(m.group(1));
        String unit = m.group(2) == null ? "s" : m.group(2).toLowerCase();
        switch (unit) {
            case "ns": return new Written(value, TimeUnit.NANOSECONDS, separate);
            case "μs": return new Written(value, TimeUnit.MICROSECONDS, separate);
            case "ms": return new Written(value, TimeUnit.MILLISECONDS, separate);
            case "m": return new Written(value, TimeUnit.MINUTES, separate);
            case "h": return new Written(value, TimeUnit.HOURS, separate);
            case "d": return new Written(value, TimeUnit.DAYS, separate);
            default: return new Written(value, TimeUnit.SECONDS, separate);
        }
    }

    private static String signature(Method method) {
        StringBuilder out = new StringBuilder(method.getName()).append('(');
        Class<?>[] types = method.getParameterTypes();
        for (int i = 0; i < types.length; i++) {
            out.append(i == 0 ? "" : ", ").append(types[i].getName());
        }
        return out.append(')').toString();
    }

    private static long saturatingMultiply(long a, long b) {
        long hi = Math.multiplyHigh(a, b);
        long lo = a * b;
        // A quarter of the range: deadlines (now + timeout) cannot overflow.
        return (hi == 0 && lo >= 0) ? Math.min(lo, Long.MAX_VALUE / 4) : Long.MAX_VALUE / 4;
    }

    private static synchronized ScheduledExecutorService scheduler() {
        if (scheduler == null) {
            scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "bloatlens-timeouts");
                t.setDaemon(true);
                return t;
            });
        }
        return scheduler;
    }
}
