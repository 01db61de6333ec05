import java.lang.reflect.Method;
import java.util.List;

/**
 * Prints HotSpot's flags as java.management sees them (`com.sun.management.internal.Flag.getAllFlags()`:
 * the unlocked flags, in HotSpot's table order), one a line: NAME TAB TYPE TAB WRITEABLE TAB ORIGIN TAB VALUE,
 * TYPE being the value's class (Boolean, Long, Double, String). The first line is the count
 * `getInternalFlagCount()` gives. Run by scripts/hotspot-flags/generate.sh; the VM's
 * profiler/src/vm/natives/hotspot_flags_JDK.tsv are its output.
 */
public class DumpFlags {
    public static void main(String[] args) throws Exception {
        // Loads jdk.management's native library, which Flag's initialiser needs.
        java.lang.management.ManagementFactory.getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class);
        Class<?> flag = Class.forName("com.sun.management.internal.Flag");
        Method all = flag.getDeclaredMethod("getAllFlags");
        Method count = flag.getDeclaredMethod("getInternalFlagCount");
        all.setAccessible(true);
        count.setAccessible(true);
        System.out.println("count\t" + count.invoke(null));
        for (Object f : (List<?>) all.invoke(null)) {
            Method vmOption = flag.getDeclaredMethod("getVMOption");
            Method value = flag.getDeclaredMethod("getValue");
            vmOption.setAccessible(true);
            value.setAccessible(true);
            com.sun.management.VMOption o = (com.sun.management.VMOption) vmOption.invoke(f);
            Object v = value.invoke(f);
            String text = o.getValue();
            if (text.contains("\t") || text.contains("\n")) throw new IllegalStateException(o.getName());
            System.out.println(o.getName() + "\t" + v.getClass().getSimpleName() + "\t" + o.isWriteable() + "\t"
                    + o.getOrigin() + "\t" + text);
        }
    }
}
