// Real-code benchmark driver for Commons CSV: print records with CSVPrinter and parse them back with a
// header, as the user guide shows (CSVFormat.DEFAULT.builder().setHeader(...), CSVFormat.parse).
import java.io.StringReader;
import java.io.StringWriter;
import org.apache.commons.csv.CSVFormat;
import org.apache.commons.csv.CSVParser;
import org.apache.commons.csv.CSVPrinter;
import org.apache.commons.csv.CSVRecord;

public class CsvDriver {
  public static void main(String[] args) throws Exception {
    int rows = Integer.parseInt(args[0]);
    String[] header = {"id", "name", "city", "amount", "note"};
    CSVFormat format = CSVFormat.DEFAULT.builder().setHeader(header).setSkipHeaderRecord(true).get();
    StringWriter out = new StringWriter();
    try (CSVPrinter printer = new CSVPrinter(out, CSVFormat.DEFAULT.builder().setHeader(header).get())) {
      for (int i = 0; i < rows; i++) {
        printer.printRecord(i, "name " + i, "City, " + (i % 23), i * 7 / 3.0,
            i % 5 == 0 ? "says \"hi\"\non two lines" : "");
      }
    }
    String csv = out.toString();
    double total = 0;
    long notes = 0;
    for (int round = 0; round < 5; round++) {
      try (CSVParser parser = format.parse(new StringReader(csv))) {
        for (CSVRecord record : parser) {
          total += Double.parseDouble(record.get("amount"));
          notes += record.get("note").length() + record.get("city").length();
        }
      }
    }
    System.out.println("csv chars: " + csv.length() + ", total: " + total + ", notes: " + notes);
  }
}
