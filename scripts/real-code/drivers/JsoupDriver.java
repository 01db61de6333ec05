// Real-code benchmark driver for jsoup: parse a bundled HTML test page, select and print from it, as the
// README shows (Jsoup.parse, Document.select, Element.text, outerHtml).
import java.nio.file.Files;
import java.nio.file.Path;
import org.jsoup.Jsoup;
import org.jsoup.nodes.Document;
import org.jsoup.nodes.Element;

public class JsoupDriver {
  public static void main(String[] args) throws Exception {
    String html = Files.readString(Path.of(args[0]));
    int rounds = Integer.parseInt(args[1]);
    long links = 0, text = 0, out = 0;
    for (int i = 0; i < rounds; i++) {
      Document doc = Jsoup.parse(html, "https://example.com/");
      for (Element p : doc.select("p")) links += p.childNodeSize();
      text += doc.body().text().length();
      out += doc.outerHtml().length();
    }
    System.out.println("paragraph children: " + links + ", text: " + text + ", html: " + out);
  }
}
