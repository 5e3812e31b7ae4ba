import org.apache.kafka.common.Uuid;
import org.apache.kafka.metadata.placement.ClusterDescriber;
import org.apache.kafka.metadata.placement.PartitionAssignment;
import org.apache.kafka.metadata.placement.PlacementSpec;
import org.apache.kafka.metadata.placement.StripedReplicaPlacer;
import org.apache.kafka.metadata.placement.TopicAssignment;
import org.apache.kafka.metadata.placement.UsableBroker;

import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.Random;

/**
 * Runs kafka-metadata's StripedReplicaPlacer on many cases in one JVM.
 *
 * <pre>
 * in:  &lt;id&gt; &lt;seed&gt; &lt;startPartition&gt; &lt;placements&gt; &lt;brokers&gt;
 *      placements: "nPartitions x rf" pairs joined by ';' (e.g. 6x3;2x1), placed one after the
 *      other with ONE placer and ONE new Random(seed), as a controller places successive topics.
 * out: one line per placement: &lt;id&gt; &lt;k&gt; OK [[..], ..]   or   &lt;id&gt; &lt;k&gt; ERR &lt;Class&gt; &lt;message&gt;
 * </pre>
 */
public final class StripedOracle {
    public static void main(String[] args) throws IOException {
        PrintStream out = OracleIO.stdout();
        OracleIO.readAll(f -> {
            StripedReplicaPlacer placer = new StripedReplicaPlacer(new Random(Long.parseLong(f[1])));
            int startPartition = Integer.parseInt(f[2]);
            List<UsableBroker> brokers = new ArrayList<>();
            for (OracleIO.Broker b : OracleIO.Broker.parseAll(f[4])) {
                brokers.add(new UsableBroker(b.id(), Optional.ofNullable(b.rack()), b.fenced()));
            }
            ClusterDescriber cluster = new ClusterDescriber() {
                @Override
                public Iterator<UsableBroker> usableBrokers() {
                    return brokers.iterator();
                }

                @Override
                public Uuid defaultDir(int brokerId) {
                    return Uuid.ZERO_UUID;
                }
            };
            String[] placements = f[3].split(";");
            for (int k = 0; k < placements.length; k++) {
                String[] spec = placements[k].split("x");
                out.println(f[0] + " " + k + " " + place(placer, cluster, startPartition,
                    Integer.parseInt(spec[0]), (short) Integer.parseInt(spec[1])));
            }
        });
        out.flush();
    }

    private static String place(StripedReplicaPlacer placer, ClusterDescriber cluster, int start, int n, short rf) {
        try {
            TopicAssignment assignment = placer.place(new PlacementSpec(start, n, rf), cluster);
            StringBuilder sb = new StringBuilder("OK [");
            List<PartitionAssignment> parts = assignment.assignments();
            for (int i = 0; i < parts.size(); i++) {
                if (i > 0) sb.append(", ");
                sb.append(OracleIO.jsonInts(parts.get(i).replicas()));
            }
            return sb.append(']').toString();
        } catch (RuntimeException e) {
            return OracleIO.error(e);
        }
    }
}
