import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

/**
 * The test harness's warm javac: one JVM compiles program after program through the compiler API
 * (the same compiler, the same arguments, the same class files as the `javac` command), so each
 * compilation costs what javac itself costs, not a JVM's start and the compiler's warm-up.
 *
 * Requests on stdin, one a line: javac's arguments separated by NUL characters. Answers on stdout:
 * a line with javac's exit status and the length in bytes of its messages, then the messages.
 */
public class JavacServer {
    public static void main(String[] args) throws Exception {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        String line;
        while ((line = in.readLine()) != null) {
            ByteArrayOutputStream messages = new ByteArrayOutputStream();
            int status;
            try {
                status = javac.run(null, messages, messages, line.split("\0"));
            } catch (RuntimeException | Error e) {
                e.printStackTrace(new PrintStream(messages, true, StandardCharsets.UTF_8));
                status = 4;
            }
            byte[] text = messages.toByteArray();
            out.print(status + " " + text.length + "\n");
            out.write(text);
            out.flush();
        }
    }
}
