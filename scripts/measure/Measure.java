// Measure a main under plain `java`: it runs REPS times in one JVM after WARM warm-up runs (or, as
// `2s`, warm-up runs for that many seconds: a small program's compiled code can take a thousand
// runs to settle) — the output of all but the last silenced — then prints the median wall time, the main thread's CPU
// time (less disturbed by other processes on a shared machine) and the median bytes allocated by
// the thread per run (com.sun.management.ThreadMXBean: what the JIT's escape analysis removed is not
// counted, as it is not allocated). Used by the real-code benchmark (scripts/real-code/measure.sh)
// and by `bloatlens-bench --fixes`.
//   java -cp overlay:classes:... Measure [--raw] WARM REPS MainClass args...
// --raw: the last line is `measure<TAB>cpu_ns<TAB>bytes<TAB>wall_ns<TAB>reps<TAB>warm` (medians; the
// warm-up runs made), for programs.
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.reflect.Method;
import java.util.Arrays;

public class Measure {
  public static void main(String[] args) throws Throwable {
    boolean raw = args.length > 0 && args[0].equals("--raw");
    if (raw) args = Arrays.copyOfRange(args, 1, args.length);
    double warmSeconds = args[0].endsWith("s") ? Double.parseDouble(args[0].substring(0, args[0].length() - 1)) : -1;
    int warm = warmSeconds >= 0 ? 0 : Integer.parseInt(args[0]);
    int reps = Integer.parseInt(args[1]);
    Method main = Class.forName(args[2]).getMethod("main", String[].class);
    String[] rest = Arrays.copyOfRange(args, 3, args.length);
    com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    PrintStream out = System.out;
    PrintStream quiet = new PrintStream(OutputStream.nullOutputStream());
    long[] ns = new long[reps];
    long[] bytes = new long[reps];
    long[] cpu = new long[reps];
    System.setOut(quiet);
    long until = System.nanoTime() + (long) (Math.max(warmSeconds, 0) * 1e9);
    int warmed = 0;
    while (warmed < warm || (warmSeconds >= 0 && (warmed == 0 || System.nanoTime() < until))) {
      main.invoke(null, (Object) rest);
      warmed++;
    }
    for (int i = 0; i < reps; i++) {
      System.setOut(i == reps - 1 ? out : quiet);
      long b0 = mx.getCurrentThreadAllocatedBytes();
      long c0 = mx.getCurrentThreadCpuTime();
      long t0 = System.nanoTime();
      main.invoke(null, (Object) rest);
      long t1 = System.nanoTime();
      long c1 = mx.getCurrentThreadCpuTime();
      long b1 = mx.getCurrentThreadAllocatedBytes();
      ns[i] = t1 - t0;
      bytes[i] = b1 - b0;
      cpu[i] = c1 - c0;
    }
    System.out.flush();
    System.setOut(out);
    Arrays.sort(ns);
    Arrays.sort(bytes);
    Arrays.sort(cpu);
    if (raw) {
      System.out.printf("measure\t%d\t%d\t%d\t%d\t%d%n", cpu[reps / 2], bytes[reps / 2], ns[reps / 2], reps, warmed);
      return;
    }
    System.out.printf("wall median %.1f ms (min %.1f), thread CPU median %.1f ms (min %.1f), allocated median %.2f MB, %d runs%n",
        ns[reps / 2] / 1e6, ns[0] / 1e6, cpu[reps / 2] / 1e6, cpu[0] / 1e6, bytes[reps / 2] / 1e6, reps);
  }
}
