// Real-code benchmark driver for commonmark-java: parse a Markdown file and render it to HTML, as the
// README shows (Parser.builder().build().parse, HtmlRenderer.builder().build().render).
import java.nio.file.Files;
import java.nio.file.Path;
import org.commonmark.node.Node;
import org.commonmark.parser.Parser;
import org.commonmark.renderer.html.HtmlRenderer;

public class CommonmarkDriver {
  public static void main(String[] args) throws Exception {
    String markdown = Files.readString(Path.of(args[0]));
    int rounds = Integer.parseInt(args[1]);
    Parser parser = Parser.builder().build();
    HtmlRenderer renderer = HtmlRenderer.builder().build();
    long total = 0;
    for (int i = 0; i < rounds; i++) {
      Node document = parser.parse(markdown);
      total += renderer.render(document).length();
    }
    System.out.println("markdown: " + markdown.length() + " chars, html: " + total);
  }
}
