// Measurement only: the loop of StringEscapeUtilsTest.testUnescapeHexCharsHtml, as a main.
import org.apache.commons.text.StringEscapeUtils;
public class TextEscapeDriver {
  public static void main(String[] args) {
    long n = 0;
    for (char i = Character.MIN_VALUE; i < Character.MAX_VALUE; i++) {
      final char c2 = (char) (i + 1);
      final String expected = Character.toString(i) + Character.toString(c2);
      final String escapedC1 = "&#x" + Integer.toHexString(i) + ";";
      final String escapedC2 = "&#x" + Integer.toHexString(c2) + ";";
      if (expected.equals(StringEscapeUtils.unescapeHtml4(escapedC1 + escapedC2))) n++;
    }
    System.out.println("equal: " + n);
  }
}
