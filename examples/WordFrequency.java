import java.util.*;

/** Counts words in a generated text: the kind of code whose allocations Bloatlens will show. */
public class WordFrequency {
    static final String[] WORDS = {"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"};

    static String makeText(int n) {
        StringBuilder sb = new StringBuilder();
        long seed = 42;
        for (int i = 0; i < n; i++) {
            seed = seed * 6364136223846793005L + 1442695040888963407L;
            sb.append(WORDS[(int) ((seed >>> 33) % WORDS.length)]).append(' ');
        }
        return sb.toString();
    }

    public static void main(String[] args) {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 20000;
        String text = makeText(n);
        Map<String, Integer> counts = new HashMap<>();
        for (String w : text.split(" ")) {
            Integer c = counts.get(w);
            counts.put(w, c == null ? 1 : c + 1);
        }
        List<String> keys = new ArrayList<>(counts.keySet());
        Collections.sort(keys);
        for (String k : keys) {
            System.out.println(k + " " + counts.get(k));
        }
    }
}
