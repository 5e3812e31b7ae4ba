import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Line protocol shared by the placement oracles (tests/placement/oracle.py writes the other side).
 * Rack names travel as hex of their UTF-8 bytes so any name survives whitespace splitting.
 */
final class OracleIO {
    private OracleIO() {
    }

    static BufferedReader stdin() {
        return new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    }

    static PrintStream stdout() {
        return new PrintStream(System.out, false, StandardCharsets.UTF_8);
    }

    static String unhex(String hex) {
        byte[] bytes = new byte[hex.length() / 2];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
        }
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /** One broker token: {@code id}, {@code id/hexrack}, either with a trailing {@code *} when fenced. */
    record Broker(int id, String rack, boolean fenced) {
        static List<Broker> parseAll(String token) {
            List<Broker> out = new ArrayList<>();
            if (token.equals("-")) return out;
            for (String item : token.split(",")) {
                boolean fenced = item.endsWith("*");
                if (fenced) item = item.substring(0, item.length() - 1);
                int slash = item.indexOf('/');
                if (slash < 0) {
                    out.add(new Broker(Integer.parseInt(item), null, fenced));
                } else {
                    out.add(new Broker(Integer.parseInt(item.substring(0, slash)), unhex(item.substring(slash + 1)), fenced));
                }
            }
            return out;
        }
    }

    /** JSON exactly as Python's json.dumps writes a list of ints: "[1, 2, 3]". */
    static String jsonInts(List<Integer> values) {
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < values.size(); i++) {
            if (i > 0) sb.append(", ");
            sb.append(values.get(i));
        }
        return sb.append(']').toString();
    }

    static String error(Throwable e) {
        String message = String.valueOf(e.getMessage()).replace('\n', ' ');
        return "ERR " + e.getClass().getSimpleName() + " " + message;
    }

    static void readAll(java.util.function.Consumer<String[]> handler) throws IOException {
        BufferedReader in = stdin();
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) continue;
            handler.accept(line.trim().split(" "));
        }
    }
}
