// Real-code benchmark driver for minimal-json: parse the project's bundled performance-test inputs and
// write them back, as its README shows (Json.parse, JsonValue.toString / writeTo).
import com.eclipsesource.json.Json;
import com.eclipsesource.json.JsonValue;
import com.eclipsesource.json.WriterConfig;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;

public class MinimalJsonDriver {
  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    int rounds = Integer.parseInt(args[1]);
    String[] names = {"rap.json", "caliper.json", "numbers-array.json"};
    long total = 0;
    for (String name : names) {
      String text = Files.readString(dir.resolve(name));
      for (int i = 0; i < rounds; i++) {
        JsonValue value = Json.parse(text);
        StringWriter out = new StringWriter();
        value.writeTo(out, i % 2 == 0 ? WriterConfig.MINIMAL : WriterConfig.PRETTY_PRINT);
        total += out.getBuffer().length();
      }
      System.out.println(name + ": " + text.length() + " chars");
    }
    System.out.println("written: " + total);
  }
}
