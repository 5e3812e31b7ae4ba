import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

/**
 * Prints what java.util.Random really returns.
 *
 * <pre>
 * in:  &lt;id&gt; &lt;seed&gt; &lt;op&gt;,&lt;op&gt;,...   ops: i (nextInt()), i&lt;bound&gt; (nextInt(bound)), l (nextLong()),
 *      z (nextBoolean()), d (nextDouble(), as raw long bits), f (nextFloat(), as raw int bits),
 *      s&lt;n&gt; (Collections.shuffle of 0..n-1)
 * out: &lt;id&gt; &lt;value&gt; &lt;value&gt; ...   (a shuffle prints its list as 0:3:1:2)
 * </pre>
 */
public final class JavaRandomOracle {
    public static void main(String[] args) throws IOException {
        PrintStream out = OracleIO.stdout();
        OracleIO.readAll(f -> {
            Random rnd = new Random(Long.parseLong(f[1]));
            StringBuilder sb = new StringBuilder(f[0]);
            for (String op : f[2].split(",")) {
                sb.append(' ');
                String arg = op.substring(1);
                switch (op.charAt(0)) {
                    case 'i' -> sb.append(arg.isEmpty() ? rnd.nextInt() : rnd.nextInt(Integer.parseInt(arg)));
                    case 'l' -> sb.append(rnd.nextLong());
                    case 'z' -> sb.append(rnd.nextBoolean());
                    case 'd' -> sb.append(Double.doubleToRawLongBits(rnd.nextDouble()));
                    case 'f' -> sb.append(Float.floatToRawIntBits(rnd.nextFloat()));
                    case 's' -> {
                        List<Integer> list = new ArrayList<>();
                        for (int i = 0; i < Integer.parseInt(arg); i++) list.add(i);
                        Collections.shuffle(list, rnd);
                        StringBuilder items = new StringBuilder();
                        for (Integer v : list) items.append(items.length() > 0 ? ":" : "").append(v);
                        sb.append(items.length() > 0 ? items : "-");
                    }
                    default -> throw new IllegalArgumentException("unknown op " + op);
                }
            }
            out.println(sb);
        });
        out.flush();
    }
}
