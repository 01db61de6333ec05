// Real-code benchmark driver for Gson: serialise a list of plain objects to JSON and read it back, as
// the README and user guide show (new Gson().toJson, fromJson with a TypeToken).
import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.reflect.TypeToken;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

public class GsonDriver {
  static class Address { String street; String city; int zip; }
  static class Customer {
    long id; String name; boolean active; double balance;
    List<String> tags = new ArrayList<>();
    Address address = new Address();
    Map<String, Integer> scores = new TreeMap<>();
  }

  public static void main(String[] args) {
    int count = Integer.parseInt(args[0]);
    List<Customer> customers = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      Customer c = new Customer();
      c.id = i; c.name = "customer " + i; c.active = i % 3 != 0; c.balance = i * 1.25;
      for (int t = 0; t < i % 4; t++) c.tags.add("tag" + t);
      c.address.street = i + " Main Street"; c.address.city = "City " + (i % 17); c.address.zip = 10000 + i;
      for (int s = 0; s < 3; s++) c.scores.put("s" + s, i * s);
      customers.add(c);
    }
    Gson gson = new GsonBuilder().create();
    long chars = 0, balance = 0;
    for (int round = 0; round < 5; round++) {
      String json = gson.toJson(customers);
      chars += json.length();
      List<Customer> back = gson.fromJson(json, new TypeToken<List<Customer>>() {}.getType());
      for (Customer c : back) balance += (long) c.balance + c.tags.size() + c.scores.size();
    }
    System.out.println("json chars: " + chars + ", checksum: " + balance);
  }
}
