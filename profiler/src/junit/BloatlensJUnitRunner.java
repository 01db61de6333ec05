// Runs JUnit tests through the JUnit Platform launcher for Bloatlens (JUnit 5 directly, JUnit 4
// through the vintage engine), and writes each test's outcome to a file, one line per test:
// STATUS \t class \t method \t display name \t message (tabs and line breaks escaped), and
// TIMEOUTS \t n when JUnit 5 timeouts were scaled (n: the invocations a timeout applied to).
// Usage: BloatlensJUnitRunner <outcomes file> <scale:FACTOR | disable | keep> [assertions:on]
//        [tags+:EXPR] [tags-:EXPR] <Class | Class#method>...
// (assertions:on: the classes the system class loader loads from now on run their asserts, as
// Surefire's enableAssertions has them; tags+/tags-: the tag expressions to keep and to leave out)
// Timeouts: `disable` sets junit.jupiter.execution.timeout.mode=disabled; `scale:F` does too and lets
// BloatlensTimeouts (compiled beside this class when the tests have a Jupiter API) apply them F times
// longer, found by Jupiter's extension auto-detection, which sees only that extension unless the
// project turned auto-detection on itself.
// Exit status: 0 when every test passed (or was skipped), 1 when one failed, 2 when none matched.

import java.io.IOException;
import java.io.PrintWriter;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import org.junit.platform.engine.ConfigurationParameters;
import org.junit.platform.engine.DiscoverySelector;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.TestSource;
import org.junit.platform.engine.discovery.DiscoverySelectors;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.PostDiscoveryFilter;
import org.junit.platform.launcher.TagFilter;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

public final class BloatlensJUnitRunner {
    private static final String MODE = "junit.jupiter.execution.timeout.mode";
    private static final String AUTODETECTION = "junit.jupiter.extensions.autodetection.enabled";
    private static final String EXTENSIONS = "META-INF/services/org.junit.jupiter.api.extension.Extension";

    public static void main(String[] args) throws Exception {
        // Before any test class loads: a class's assertion status is fixed when it is initialized.
        if (args.length > 2 && args[2].equals("assertions:on")) {
            ClassLoader.getSystemClassLoader().setDefaultAssertionStatus(true);
        }
        List<DiscoverySelector> selectors = new ArrayList<>();
        List<PostDiscoveryFilter> filters = new ArrayList<>();
        for (int i = 2; i < args.length; i++) {
            String s = args[i];
            if (s.equals("assertions:on")) {
                continue;
            } else if (s.startsWith("tags+:")) {
                filters.add(TagFilter.includeTags(s.substring("tags+:".length()).trim().split("\\s*,\\s*")));
            } else if (s.startsWith("tags-:")) {
                filters.add(TagFilter.excludeTags(s.substring("tags-:".length()).trim().split("\\s*,\\s*")));
            } else {
                selectors.add(s.contains("#") ? DiscoverySelectors.selectMethod(s) : DiscoverySelectors.selectClass(s));
            }
        }
        LauncherDiscoveryRequestBuilder builder =
                LauncherDiscoveryRequestBuilder.request().selectors(selectors).filters(filters.toArray(new PostDiscoveryFilter[0]));
        // The project's own parameters (junit-platform.properties, system properties) decide first.
        ConfigurationParameters project = builder.build().getConfigurationParameters();
        boolean timeoutsOn = !project.get(MODE).map(m -> m.trim().equalsIgnoreCase("disabled")).orElse(false);
        String timeouts = args[1];
        boolean scaling = false;
        boolean onlyOurs = false;
        if (timeouts.startsWith("scale:") && timeoutsOn && timeoutsExtension() != null) {
            builder.configurationParameter(MODE, "disabled")
                    .configurationParameter("bloatlens.timeouts.factor", timeouts.substring("scale:".length()))
                    .configurationParameter(AUTODETECTION, "true");
            scaling = true;
            onlyOurs = !project.getBoolean(AUTODETECTION).orElse(false);
        } else if (timeouts.equals("disable")) {
            builder.configurationParameter(MODE, "disabled");
        }
        LauncherDiscoveryRequest request = builder.build();
        Launcher launcher = LauncherFactory.create();
        int[] counts = new int[2]; // tests run, tests failed
        Thread thread = Thread.currentThread();
        ClassLoader loader = thread.getContextClassLoader();
        if (onlyOurs) {
            thread.setContextClassLoader(new OnlyOurExtension(loader));
        }
        try (PrintWriter out = new PrintWriter(Files.newBufferedWriter(Paths.get(args[0]), StandardCharsets.UTF_8))) {
            try {
                execute(launcher, request, out, counts);
            } catch (RuntimeException e) {
                // Discovery failed (an unknown class or method): the root cause names it.
                Throwable cause = e;
                while (cause.getCause() != null) {
                    cause = cause.getCause();
                }
                out.println("ERROR\t\t\t\t" + escape(describe(cause)));
            } finally {
                thread.setContextClassLoader(loader);
            }
            if (scaling) {
                out.println("TIMEOUTS\t" + timeoutsExtension().getField("timed").get(null));
            }
        }
        System.exit(counts[0] == 0 ? 2 : counts[1] > 0 ? 1 : 0);
    }

    private static Class<?> timeoutsExtension() {
        try {
            return Class.forName("BloatlensTimeouts");
        } catch (ClassNotFoundException | LinkageError e) {
            return null;
        }
    }

    // The context class loader while the tests run when the project did not turn on Jupiter's
    // extension auto-detection: the application class loader with only our extension's service file.
    private static final class OnlyOurExtension extends ClassLoader {
        private final String ours;

        OnlyOurExtension(ClassLoader parent) {
            super(parent);
            String self = BloatlensJUnitRunner.class.getResource("BloatlensJUnitRunner.class").toString();
            ours = self.substring(0, self.length() - "BloatlensJUnitRunner.class".length());
        }

        @Override
        public Enumeration<URL> getResources(String name) throws IOException {
            Enumeration<URL> all = super.getResources(name);
            if (!name.equals(EXTENSIONS)) {
                return all;
            }
            List<URL> kept = new ArrayList<>();
            for (URL url : Collections.list(all)) {
                if (url.toString().startsWith(ours)) {
                    kept.add(url);
                }
            }
            return Collections.enumeration(kept);
        }
    }

    private static void execute(Launcher launcher, LauncherDiscoveryRequest request, PrintWriter out, int[] counts) {
        {
            launcher.execute(request, new TestExecutionListener() {
                private TestPlan plan;

                @Override
                public void testPlanExecutionStarted(TestPlan testPlan) {
                    plan = testPlan;
                }

                @Override
                public void executionSkipped(TestIdentifier id, String reason) {
                    if (id.isTest()) {
                        counts[0]++;
                        write(out, "SKIPPED", id, reason);
                        return;
                    }
                    // A class skipped as a whole (@Disabled, a condition): its tests are, as Surefire says.
                    for (TestIdentifier test : plan.getDescendants(id)) {
                        if (test.isTest()) {
                            counts[0]++;
                            write(out, "SKIPPED", test, reason);
                        }
                    }
                }

                @Override
                public void executionFinished(TestIdentifier id, TestExecutionResult result) {
                    // A container that fails (a @BeforeAll, a class that cannot be instantiated) fails its tests.
                    if (!id.isTest() && result.getStatus() != TestExecutionResult.Status.FAILED) {
                        return;
                    }
                    counts[0]++;
                    String status = result.getStatus() == TestExecutionResult.Status.SUCCESSFUL ? "PASSED"
                            : result.getStatus() == TestExecutionResult.Status.ABORTED ? "ABORTED" : "FAILED";
                    if (status.equals("FAILED")) {
                        counts[1]++;
                    }
                    write(out, status, id, result.getThrowable().map(BloatlensJUnitRunner::describe).orElse(""));
                }
            });
        }
    }

    // An assertion's message says it all ("discount applied twice ==> expected: <9000> but was: <8100>");
    // any other throwable is named ("java.lang.NullPointerException: …").
    private static String describe(Throwable t) {
        String message = t.getMessage();
        if (t instanceof AssertionError && message != null) {
            return message;
        }
        return message == null ? t.getClass().getName() : t.getClass().getName() + ": " + message;
    }

    private static void write(PrintWriter out, String status, TestIdentifier id, String message) {
        String cls = "";
        String method = "";
        TestSource source = id.getSource().orElse(null);
        if (source instanceof MethodSource) {
            cls = ((MethodSource) source).getClassName();
            method = ((MethodSource) source).getMethodName();
        } else if (source instanceof ClassSource) {
            cls = ((ClassSource) source).getClassName();
        }
        out.println(status + "\t" + cls + "\t" + method + "\t" + escape(id.getDisplayName()) + "\t" + escape(message));
        out.flush();
    }

    private static String escape(String s) {
        return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "");
    }
}
