// The bundled example of `scripts/demo.sh`: an order report with several kinds of bloat that
// Bloatlens finds — debug strings built and thrown away, a result object per call, a list filled
// only for its size, a map decoded whole to read one entry, a copy made element by element.
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

public class OrderReport {
    record Order(int id, String customer, double amount, String tags) {}

    static final class Totals {
        final double sum, max;
        Totals(double sum, double max) { this.sum = sum; this.max = max; }
    }

    static void check(boolean ok, String message) {
        if (!ok) throw new IllegalStateException(message);
    }

    /** Sum and max of the amounts: a new Totals on every call, read once by the caller. */
    static Totals totals(List<Order> orders) {
        double sum = 0, max = 0;
        for (Order o : orders) {
            check(o.amount() >= 0, "negative amount in " + o);
            sum += o.amount();
            max = Math.max(max, o.amount());
        }
        return new Totals(sum, max);
    }

    /** Decodes every tag of an order into a map, to read one. */
    static String priority(Order o) {
        Map<String, String> tags = new HashMap<>();
        for (String kv : o.tags().split(",")) {
            String[] p = kv.split("=");
            tags.put(p[0], p[1]);
        }
        return tags.getOrDefault("priority", "normal");
    }

    /** Counts the large orders by collecting them first. */
    static int countLarge(List<Order> orders) {
        List<Order> large = new ArrayList<>();
        for (Order o : orders) if (o.amount() > 500) large.add(new Order(o.id(), o.customer(), o.amount(), o.tags()));
        return large.size();
    }

    /** A copy of the amounts, element by element. */
    static double[] snapshot(double[] amounts) {
        double[] copy = new double[amounts.length];
        for (int i = 0; i < amounts.length; i++) copy[i] = amounts[i];
        return copy;
    }

    public static void main(String[] args) {
        List<Order> orders = new ArrayList<>();
        double[] amounts = new double[400];
        for (int i = 0; i < 400; i++) {
            amounts[i] = (i * 37) % 1000;
            orders.add(new Order(i, "customer" + (i % 7), amounts[i], "region=eu,priority=" + (i % 5 == 0 ? "high" : "low") + ",channel=web"));
        }
        int high = 0, large = 0;
        double total = 0;
        for (int day = 0; day < 20; day++) {
            Totals t = totals(orders);
            total += t.sum;
            large += countLarge(orders);
            double[] copy = snapshot(amounts);
            total += copy[day];
        }
        for (Order o : orders) if (priority(o).equals("high")) high++;
        System.out.printf("orders: %d, high priority: %d, large: %d, total: %.1f%n", orders.size(), high, large, total);
    }
}
