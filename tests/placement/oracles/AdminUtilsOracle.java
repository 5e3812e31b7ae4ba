import org.apache.kafka.admin.AdminUtils;
import org.apache.kafka.admin.BrokerMetadata;

import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Runs Kafka 4.0.x's AdminUtils.assignReplicasToBrokers on many cases in one JVM.
 *
 * <pre>
 * in:  &lt;id&gt; assign &lt;nPartitions&gt; &lt;rf&gt; &lt;fixedStartIndex&gt; &lt;startPartitionId&gt; &lt;brokers&gt;
 *      &lt;id&gt; grow &lt;existingPartitions&gt; &lt;partition0Leader&gt; &lt;rf&gt; &lt;newTotal&gt; &lt;brokers sorted by id&gt;
 * out: &lt;id&gt; OK {"0": [..], ...}   or   &lt;id&gt; ERR &lt;ExceptionClass&gt; &lt;message&gt;
 * </pre>
 * "grow" is AdminZkClient.createNewPartitionsAssignment (Kafka 3.9, removed with ZooKeeper): the
 * start index is the position of the first broker whose id is at least partition 0's leader, the
 * first new partition id is the existing partition count.
 */
public final class AdminUtilsOracle {
    public static void main(String[] args) throws IOException {
        PrintStream out = OracleIO.stdout();
        OracleIO.readAll(f -> out.println(f[0] + " " + run(f)));
        out.flush();
    }

    private static String run(String[] f) {
        try {
            List<BrokerMetadata> brokers = new ArrayList<>();
            for (OracleIO.Broker b : OracleIO.Broker.parseAll(f[6])) {
                brokers.add(new BrokerMetadata(b.id(), Optional.ofNullable(b.rack())));
            }
            Map<Integer, List<Integer>> result;
            if (f[1].equals("assign")) {
                result = AdminUtils.assignReplicasToBrokers(brokers, Integer.parseInt(f[2]), Integer.parseInt(f[3]),
                    Integer.parseInt(f[4]), Integer.parseInt(f[5]));
            } else {
                int existing = Integer.parseInt(f[2]);
                int leader = Integer.parseInt(f[3]);
                int startIndex = 0;
                while (startIndex < brokers.size() && brokers.get(startIndex).id < leader) startIndex++;
                if (startIndex == brokers.size()) startIndex = 0;
                result = AdminUtils.assignReplicasToBrokers(brokers, Integer.parseInt(f[5]) - existing,
                    Integer.parseInt(f[4]), startIndex, existing);
            }
            StringBuilder sb = new StringBuilder("OK {");
            boolean first = true;
            for (Map.Entry<Integer, List<Integer>> e : new TreeMap<>(result).entrySet()) {
                if (!first) sb.append(", ");
                first = false;
                sb.append('"').append(e.getKey()).append("\": ").append(OracleIO.jsonInts(e.getValue()));
            }
            return sb.append('}').toString();
        } catch (RuntimeException e) {
            return OracleIO.error(e);
        }
    }
}
