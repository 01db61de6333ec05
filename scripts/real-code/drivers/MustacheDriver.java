// Real-code benchmark driver for JMustache: compile a template once and execute it on many contexts, as
// the README shows (Mustache.compiler().compile(...).execute(context)).
import com.samskivert.mustache.Mustache;
import com.samskivert.mustache.Template;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

public class MustacheDriver {
  static final String TEMPLATE = String.join("\n",
      "<h1>{{title}}</h1>",
      "{{#user}}<p>Hello {{name}} ({{email}})</p>{{/user}}",
      "<ul>",
      "{{#items}}  <li class=\"{{#featured}}featured{{/featured}}\">{{name}}: {{price}}{{^inStock}} (sold out){{/inStock}}</li>",
      "{{/items}}</ul>",
      "{{#footer}}<footer>{{.}}</footer>{{/footer}}");

  public static void main(String[] args) {
    int pages = Integer.parseInt(args[0]);
    Template template = Mustache.compiler().escapeHTML(true).compile(TEMPLATE);
    long total = 0;
    for (int p = 0; p < pages; p++) {
      Map<String, Object> context = new HashMap<>();
      context.put("title", "Page " + p + " & more");
      Map<String, Object> user = new HashMap<>();
      user.put("name", "user" + (p % 50));
      user.put("email", "user" + (p % 50) + "@example.com");
      context.put("user", user);
      List<Map<String, Object>> items = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        Map<String, Object> item = new HashMap<>();
        item.put("name", "item <" + i + ">");
        item.put("price", (p + i) * 3 / 2.0);
        item.put("featured", i % 3 == 0);
        item.put("inStock", (p + i) % 5 != 0);
        items.add(item);
      }
      context.put("items", items);
      context.put("footer", List.of("terms", "privacy"));
      total += template.execute(context).length();
    }
    System.out.println("pages: " + pages + ", chars: " + total);
  }
}
