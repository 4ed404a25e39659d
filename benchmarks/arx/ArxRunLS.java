/*
 * ArxRunLS: serve-mode runner for ARX 3.9.2's local recoding (ARXResult.optimizeIterativeFast),
 * driven by benchmarks/bench_local_recoding.py (--arx-classpath) so that ARX and gpuppdp are timed
 * interleaved from one warm JVM. Our own code against ARX's public API; nothing of ARX is in here.
 *
 * What it runs (per run, on a fresh Data object built from the table read at start and a fresh
 * ARXConfiguration, neither timed):
 *   ARXAnonymizer.anonymize(data, config)      KAnonymity(k), setSuppressionLimit(supp),
 *                                              Metric.createLossMetric(), default algorithm
 *                                              (Flash) and ARX's defaults otherwise (as ArxRun)
 *   result.getOutput(false)                    the full-domain optimum's output (no buffer fork,
 *                                              as the reference runner behind
 *                                              tests/data/arx_local_recoding.json)
 *   result.optimizeIterativeFast(output, records)   local recoding, in place on that output
 * each of the three timed with System.nanoTime.
 *
 * Arguments (key=value):
 *   data=FILE.csv          the table, ';'-separated, header line
 *   hierdir=DIR            folder of the ARX hierarchy files (';'-separated, one line per leaf)
 *   [hierprefix=PREFIX]    hierarchy of attribute A is DIR/PREFIX+A+".csv"
 *                          (default "adult_hierarchy_", as ArxRun; the census case passes
 *                          hierprefix=census_hierarchy_)
 *   qids=a,b,c             quasi-identifiers; every other column is insensitive
 *   k=K                    k-anonymity (default 5)
 *   supp=S                 suppression limit in [0, 1] (default 0)
 *   records=R              records per iteration of optimizeIterativeFast, in [0, 1] (default 0.01)
 *
 * Protocol (one JSON line per line of input, stdout flushed after each):
 *   on start:   {"ready": true}
 *   "N" (int):  N runs; prints {"anonymize_ms": [..N], "get_output_ms": [..N],
 *               "optimize_iterative_fast_ms": [..N],
 *               "full_domain": {"suppressed_records": int, "granularity": float},
 *               "local_recoding": {"suppressed_records": int, "granularity": float}}
 *               full_domain / local_recoding describe the last run's output before / after
 *               optimizeIterativeFast (computed outside the timed calls): suppressed_records
 *               counts rows with DataHandle.isOutlier(row), granularity is
 *               getStatistics().getQualityStatistics().getGranularity().getArithmeticMean(false).
 *               On failure: {"error": "..."}.
 *   "quit" (or end of input): exits.
 *
 * Build (ARX 3.9.2 compiled from its public repository, tag v3.9.2, with javac --release 8;
 * its classes and jars as one classpath line in /work/arxbuild/CLASSPATH):
 *   mkdir -p /work/arxbuild/census
 *   javac --release 8 -cp "$(cat /work/arxbuild/CLASSPATH)" -d /work/arxbuild/census \
 *       benchmarks/arx/ArxRunLS.java
 * Run by hand (from the repository root):
 *   printf '2\nquit\n' | java -cp "$(cat /work/arxbuild/CLASSPATH):/work/arxbuild/census" ArxRunLS \
 *       data=gpuppdp/data/adult/adult.csv hierdir=gpuppdp/data/adult \
 *       qids=sex,age,race,marital-status,education k=5 supp=0.05 records=0.01
 */

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.*;
import org.deidentifier.arx.*;
import org.deidentifier.arx.AttributeType.Hierarchy;
import org.deidentifier.arx.criteria.KAnonymity;
import org.deidentifier.arx.metric.Metric;

public class ArxRunLS {

    public static void main(String[] a) throws Exception {
        Map<String, String> o = new HashMap<>();
        for (String s : a) {
            int i = s.indexOf('=');
            if (i < 0) throw new IllegalArgumentException("expected key=value: " + s);
            o.put(s.substring(0, i), s.substring(i + 1));
        }
        String dataPath = o.get("data"), hierDir = o.get("hierdir");
        String prefix = o.getOrDefault("hierprefix", "adult_hierarchy_");
        String[] qids = o.get("qids").split(",");
        int k = Integer.parseInt(o.getOrDefault("k", "5"));
        double supp = Double.parseDouble(o.getOrDefault("supp", "0"));
        double records = Double.parseDouble(o.getOrDefault("records", "0.01"));

        // The table, read once by ARX's CSV reader (header first), and the hierarchies
        Data source = Data.create(dataPath, StandardCharsets.UTF_8, ';');
        List<String[]> rows = new ArrayList<>();
        for (Iterator<String[]> it = source.getHandle().iterator(); it.hasNext();) rows.add(it.next().clone());
        Map<String, Hierarchy> hierarchies = new HashMap<>();
        for (String q : qids) {
            hierarchies.put(q, Hierarchy.create(new File(hierDir, prefix + q + ".csv").getPath(),
                                                StandardCharsets.UTF_8, ';'));
        }
        ARXAnonymizer anonymizer = new ARXAnonymizer();

        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        System.out.println("{\"ready\": true}");
        System.out.flush();
        String line;
        while ((line = in.readLine()) != null) {
            line = line.trim();
            if (line.isEmpty()) continue;
            if (line.equals("quit")) break;
            try {
                int n = Integer.parseInt(line);
                System.out.println(runs(n, anonymizer, rows, hierarchies, qids, k, supp, records));
            } catch (Throwable t) {
                System.out.println("{\"error\": \"" + json(t.toString()) + "\"}");
            }
            System.out.flush();
        }
    }

    /** n runs of anonymize, getOutput, optimizeIterativeFast; the JSON line. */
    static String runs(int n, ARXAnonymizer anonymizer, List<String[]> rows,
                       Map<String, Hierarchy> hierarchies, String[] qids, int k, double supp,
                       double records) throws Exception {
        List<Double> anonMs = new ArrayList<>(), outMs = new ArrayList<>(), optMs = new ArrayList<>();
        String fullDomain = "null", localRecoding = "null";
        for (int r = 0; r < n; r++) {
            Data data = data(rows, hierarchies, qids);
            ARXConfiguration config = ARXConfiguration.create();
            config.addPrivacyModel(new KAnonymity(k));
            config.setSuppressionLimit(supp);
            config.setQualityModel(Metric.createLossMetric());
            System.gc();

            long t0 = System.nanoTime();
            ARXResult result = anonymizer.anonymize(data, config);
            long t1 = System.nanoTime();
            if (result.getGlobalOptimum() == null) throw new IllegalStateException("no solution");
            DataHandle output = result.getOutput(false);
            long t2 = System.nanoTime();
            if (r == n - 1) fullDomain = describe(output);
            long t3 = System.nanoTime();
            result.optimizeIterativeFast(output, records);
            long t4 = System.nanoTime();
            if (r == n - 1) localRecoding = describe(output);

            anonMs.add((t1 - t0) / 1e6);
            outMs.add((t2 - t1) / 1e6);
            optMs.add((t4 - t3) / 1e6);
        }
        return "{\"anonymize_ms\": " + list(anonMs) + ", \"get_output_ms\": " + list(outMs)
               + ", \"optimize_iterative_fast_ms\": " + list(optMs) + ", \"full_domain\": " + fullDomain
               + ", \"local_recoding\": " + localRecoding + "}";
    }

    /** A fresh Data object of the rows (header first): QIDs with their hierarchies, others
     *  insensitive; its handle created (dictionary-encoded) here, outside the timed calls. */
    static Data data(List<String[]> rows, Map<String, Hierarchy> hierarchies, String[] qids) {
        List<String[]> copy = new ArrayList<>(rows.size());
        for (String[] row : rows) copy.add(row.clone());
        Data data = Data.create(copy);
        DataDefinition def = data.getDefinition();
        Set<String> q = new HashSet<>(Arrays.asList(qids));
        for (String col : rows.get(0)) {
            if (q.contains(col)) def.setAttributeType(col, hierarchies.get(col));
            else def.setAttributeType(col, AttributeType.INSENSITIVE_ATTRIBUTE);
        }
        data.getHandle();
        return data;
    }

    /** {"suppressed_records": outliers, "granularity": ARX's granularity} of an output handle. */
    static String describe(DataHandle h) {
        int suppressed = 0;
        for (int row = 0; row < h.getNumRows(); row++) if (h.isOutlier(row)) suppressed++;
        double g = h.getStatistics().getQualityStatistics().getGranularity().getArithmeticMean(false);
        return "{\"suppressed_records\": " + suppressed + ", \"granularity\": "
               + (Double.isNaN(g) || Double.isInfinite(g) ? "null" : Double.toString(g)) + "}";
    }

    static String list(List<Double> l) {
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < l.size(); i++) b.append(i > 0 ? ", " : "").append(String.format(Locale.ROOT, "%.3f", l.get(i)));
        return b.append("]").toString();
    }

    static String json(String s) {
        StringBuilder b = new StringBuilder();
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
            else b.append(c);
        }
        return b.toString();
    }
}
