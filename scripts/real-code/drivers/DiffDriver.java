// Real-code benchmark driver for java-diff-utils: diff a text file (one of the project's own sources)
// against an edited copy of it and write the unified diff and the side-by-side rows, as the README shows
// (DiffUtils.diff, UnifiedDiffUtils.generateUnifiedDiff, DiffRowGenerator).
import com.github.difflib.DiffUtils;
import com.github.difflib.UnifiedDiffUtils;
import com.github.difflib.patch.Patch;
import com.github.difflib.text.DiffRow;
import com.github.difflib.text.DiffRowGenerator;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

public class DiffDriver {
  public static void main(String[] args) throws Exception {
    List<String> original = Files.readAllLines(Path.of(args[0]));
    // the edits: every 7th line changed, every 11th removed, a line added after every 13th
    List<String> revised = new ArrayList<>();
    for (int n = 0; n < original.size(); n++) {
      String line = original.get(n);
      if (n % 11 == 5) continue;
      revised.add(n % 7 == 3 ? line.replace("e", "E") + " // edited" : line);
      if (n % 13 == 8) revised.add("// added after line " + n);
    }
    int rounds = Integer.parseInt(args[1]);
    DiffRowGenerator generator = DiffRowGenerator.create().showInlineDiffs(true).inlineDiffByWord(true)
        .oldTag(f -> "~").newTag(f -> "**").build();
    long lines = 0, rows = 0;
    for (int i = 0; i < rounds; i++) {
      Patch<String> patch = DiffUtils.diff(original, revised);
      lines += UnifiedDiffUtils.generateUnifiedDiff("original", "revised", original, patch, 3).size();
      List<DiffRow> diffRows = generator.generateDiffRows(original, revised);
      for (DiffRow row : diffRows) rows += row.getOldLine().length() + row.getNewLine().length();
    }
    System.out.println("original: " + original.size() + " lines, revised: " + revised.size()
        + ", unified diff lines: " + lines + ", row chars: " + rows);
  }
}
