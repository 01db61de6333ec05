// A warm javac for bloatlens-lsp: one JVM that compiles on request, so that a save does not pay
// javac's start-up. Protocol on stdin/stdout: a request is a line with the argument count N and N
// lines of arguments; the answer is javac's exit code on one line, the byte length of its output
// on the next, then the output itself (UTF-8).
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

public class BloatlensJavacServer {
    public static void main(String[] argv) throws Exception {
        JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        OutputStream out = System.out;
        String line;
        while ((line = in.readLine()) != null) {
            int n = Integer.parseInt(line.trim());
            String[] args = new String[n];
            for (int i = 0; i < n; i++) args[i] = in.readLine();
            ByteArrayOutputStream buf = new ByteArrayOutputStream();
            int rc = compiler.run(null, buf, buf, args);
            byte[] text = buf.toByteArray();
            out.write((rc + "\n" + text.length + "\n").getBytes(StandardCharsets.UTF_8));
            out.write(text);
            out.flush();
        }
    }
}
