// Runs JUnit tests through the JUnit Platform launcher for Bloatlens (JUnit 5 directly, JUnit 4
// through the vintage engine), and writes each test's outcome to a file, one line per test:
// STATUS \t class \t method \t display name \t message (tabs and line breaks escaped).
// Usage: BloatlensJUnitRunner <outcomes file> <Class | Class#method>...
// Exit status: 0 when every test passed (or was skipped), 1 when one failed, 2 when none matched.

import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import org.junit.platform.engine.DiscoverySelector;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.TestSource;
import org.junit.platform.engine.discovery.DiscoverySelectors;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

public final class BloatlensJUnitRunner {
    public static void main(String[] args) throws Exception {
        List<DiscoverySelector> selectors = new ArrayList<>();
        for (int i = 1; i < args.length; i++) {
            String s = args[i];
            selectors.add(s.contains("#") ? DiscoverySelectors.selectMethod(s) : DiscoverySelectors.selectClass(s));
        }
        LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request().selectors(selectors).build();
        Launcher launcher = LauncherFactory.create();
        int[] counts = new int[2]; // tests run, tests failed
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
            }
        }
        System.exit(counts[0] == 0 ? 2 : counts[1] > 0 ? 1 : 0);
    }

    private static void execute(Launcher launcher, LauncherDiscoveryRequest request, PrintWriter out, int[] counts) {
        {
            launcher.execute(request, new TestExecutionListener() {
                @Override
                public void executionSkipped(TestIdentifier id, String reason) {
                    if (id.isTest()) {
                        counts[0]++;
                        write(out, "SKIPPED", id, reason);
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
