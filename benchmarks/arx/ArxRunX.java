import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.*;
import org.deidentifier.arx.*;
import org.deidentifier.arx.AttributeType.Hierarchy;
import org.deidentifier.arx.criteria.*;
import org.deidentifier.arx.metric.Metric;
import org.deidentifier.arx.ARXLattice.ARXNode;

/*
 * ArxRunX: one ARX 3.9.2 anonymization case, for references and for benchmarks/bench_cli_arx.py
 * (--arx-classpath), which times ARX and the gpuppdp command line interleaved from one warm JVM,
 * and benchmarks/bench_quality_arx.py (loss and precision with a gs-factor and attribute weights).
 * Our own code against ARX's public API; nothing of ARX is in here.
 *
 * Arguments (key=value):
 *   data=FILE.csv hierdir=DIR [hierprefix=adult_hierarchy_] qids=a,b,c
 *   [sensitive=col [order=v1,v2,...]]         the sensitive attribute (an ordered string type)
 *   k=K (0: none) supp=S
 *   metric=loss|precision|discernibility|discernibility-monotonic|aecs|height|ambiguity|
 *          entropy|entropy-monotonic|normalized-entropy|kl
 *   [gs=G]                                    gs-factor in [0, 1] of loss, precision, aecs or
 *                                             entropy (ARX's default 0.5):
 *                                             Metric.createLossMetric(G),
 *                                             Metric.createPrecisionMetric(G) (non-monotonic,
 *                                             as createPrecisionMetric() is),
 *                                             Metric.createAECSMetric(G) or
 *                                             Metric.createEntropyMetric(monotonic, G)
 *   [weights=col:w,col:w,...]                 attribute weights: config.setAttributeWeight(col, w)
 *                                             each (ARX's default for the others: 0.5)
 *   [ldiv=L]                                  distinct l-diversity
 *   [ldivtype=entropy ldivl=L]                entropy l-diversity (Shannon)
 *   [ldivtype=recursive c=C ldivl=L]          recursive (c, l)-diversity
 *   [tclose=equal|ordered|hierarchical t=T [thier=FILE]]   t-closeness
 *   [avgrisk=T[,HIGHEST,RECORDS]] [sampleuniq=T]   average re-identification risk, sample uniqueness
 *   [popuniq=T:pitman|zayatz|snb|dankar:REGION|SIZE]  population uniqueness (ARX's default solver)
 *   [heuristic=MS [algorithm=bottomup|genetic]] [threshold=NODES]
 *   warmup=1 runs=5 [output=0|1] [save=FILE] [id=name] [mode=batch|serve]
 * Columns that are not QIDs and not the sensitive column are insensitive.
 *
 * mode=batch (default): warmup + runs anonymize() calls, then one JSON line (the optimum, checked
 * transformations, anonymize_ms_median ...).
 * mode=serve: prints {"ready": true, ...}; then per input line "warm" (untimed) or "run" one
 * anonymize() and one line {"ms", "out_ms", "search_ms", "t", "score", "checked"}; "quit" ends
 * with the batch mode's summary line over the "run" lines.
 *
 * Build (ARX 3.9.2 compiled from its public repository, tag v3.9.2, with javac --release 8;
 * its classes and jars as one classpath line in /work/arxbuild/CLASSPATH):
 *   javac --release 8 -cp "$(cat /work/arxbuild/CLASSPATH)" -d /work/arxbuild/census \
 *       benchmarks/arx/ArxRunX.java
 */
public class ArxRunX {
    public static void main(String[] a) throws Exception {
        Map<String, String> o = new HashMap<>();
        for (String s : a) { int i = s.indexOf('='); o.put(s.substring(0, i), s.substring(i + 1)); }
        String dataPath = o.get("data"), hierDir = o.get("hierdir");
        String prefix = o.getOrDefault("hierprefix", "adult_hierarchy_");
        String[] qids = o.get("qids").split(",");
        String sensitive = o.get("sensitive");
        int ldiv = Integer.parseInt(o.getOrDefault("ldiv", "0"));
        int k = Integer.parseInt(o.getOrDefault("k", "5"));
        double supp = Double.parseDouble(o.getOrDefault("supp", "0"));
        String metric = o.getOrDefault("metric", "loss");
        int warm = Integer.parseInt(o.getOrDefault("warmup", "1"));
        int runs = Integer.parseInt(o.getOrDefault("runs", "5"));
        boolean timeOutput = o.getOrDefault("output", "0").equals("1");

        long tl0 = System.nanoTime();
        Data data = Data.create(dataPath, StandardCharsets.UTF_8, ';');
        DataHandle h0 = data.getHandle(); // reads + dictionary-encodes the CSV (not timed as anonymize)
        long loadNs = System.nanoTime() - tl0;
        Set<String> q = new HashSet<>(Arrays.asList(qids));
        DataDefinition def = data.getDefinition();
        for (int c = 0; c < h0.getNumColumns(); c++) {
            String col = h0.getAttributeName(c);
            if (q.contains(col)) {
                def.setAttributeType(col, Hierarchy.create(new File(hierDir, prefix + col + ".csv").getPath(), StandardCharsets.UTF_8, ';'));
            } else if (col.equals(sensitive)) {
                def.setAttributeType(col, AttributeType.SENSITIVE_ATTRIBUTE);
                if (o.containsKey("order")) def.setDataType(col, DataType.createOrderedString(o.get("order").split(",")));
            } else {
                def.setAttributeType(col, AttributeType.INSENSITIVE_ATTRIBUTE);
            }
        }
        ARXConfiguration config = ARXConfiguration.create();
        if (k > 0) config.addPrivacyModel(new KAnonymity(k));
        String ldivType = o.getOrDefault("ldivtype", "distinct");
        double ldivD = Double.parseDouble(o.getOrDefault("ldivl", "0"));
        if (ldiv > 0 && ldivType.equals("distinct")) config.addPrivacyModel(new DistinctLDiversity(sensitive, ldiv));
        if (ldivType.equals("entropy")) config.addPrivacyModel(new EntropyLDiversity(sensitive, ldivD)); // Shannon
        if (ldivType.equals("recursive")) config.addPrivacyModel(new RecursiveCLDiversity(sensitive, Double.parseDouble(o.get("c")), (int) ldivD));
        if (o.containsKey("tclose")) {
            double t = Double.parseDouble(o.get("t"));
            String tc = o.get("tclose");
            if (tc.equals("equal")) config.addPrivacyModel(new EqualDistanceTCloseness(sensitive, t));
            else if (tc.equals("hierarchical")) config.addPrivacyModel(new HierarchicalDistanceTCloseness(sensitive, t,
                    Hierarchy.create(o.get("thier"), StandardCharsets.UTF_8, ';')));
            else if (tc.equals("ordered")) config.addPrivacyModel(new OrderedDistanceTCloseness(sensitive, t));
            else throw new IllegalArgumentException(tc);
        }
        if (o.containsKey("avgrisk")) { // t, or t,highestRisk,recordsAtRisk
            String[] r = o.get("avgrisk").split(",");
            config.addPrivacyModel(r.length == 1 ? new AverageReidentificationRisk(Double.parseDouble(r[0]))
                : new AverageReidentificationRisk(Double.parseDouble(r[0]), Double.parseDouble(r[1]), Double.parseDouble(r[2])));
        }
        if (o.containsKey("sampleuniq")) config.addPrivacyModel(new SampleUniqueness(Double.parseDouble(o.get("sampleuniq"))));
        if (o.containsKey("popuniq")) { // t:model:region or t:model:population size
            String[] u = o.get("popuniq").split(":");
            ARXPopulationModel population = u[2].matches("[0-9]+") ? ARXPopulationModel.create(Long.parseLong(u[2]))
                : ARXPopulationModel.create(ARXPopulationModel.Region.valueOf(u[2].toUpperCase()));
            config.addPrivacyModel(new PopulationUniqueness(Double.parseDouble(u[0]),
                org.deidentifier.arx.risk.RiskModelPopulationUniqueness.PopulationUniquenessModel.valueOf(u[1].toUpperCase()),
                population));
        }
        config.setSuppressionLimit(supp);
        if (o.containsKey("weights")) { // col:w,col:w
            for (String cw : o.get("weights").split(",")) {
                int i = cw.lastIndexOf(':');
                config.setAttributeWeight(cw.substring(0, i), Double.parseDouble(cw.substring(i + 1)));
            }
        }
        boolean hasGs = o.containsKey("gs");
        double gs = hasGs ? Double.parseDouble(o.get("gs")) : 0.5;
        if (hasGs && !metric.equals("loss") && !metric.equals("precision") && !metric.equals("aecs")
                && !metric.equals("entropy") && !metric.equals("entropy-monotonic"))
            throw new IllegalArgumentException("gs= needs metric=loss, precision, aecs or entropy");
        if (metric.equals("loss")) config.setQualityModel(hasGs ? Metric.createLossMetric(gs) : Metric.createLossMetric());
        else if (metric.equals("precision")) config.setQualityModel(hasGs ? Metric.createPrecisionMetric(gs) : Metric.createPrecisionMetric());
        else if (metric.equals("aecs")) config.setQualityModel(hasGs ? Metric.createAECSMetric(gs) : Metric.createAECSMetric());
        else if (metric.equals("height")) config.setQualityModel(Metric.createHeightMetric());
        else if (metric.equals("ambiguity")) config.setQualityModel(Metric.createAmbiguityMetric());
        else if (metric.equals("entropy") || metric.equals("entropy-monotonic")) {
            boolean monotonic = metric.equals("entropy-monotonic");
            config.setQualityModel(hasGs ? Metric.createEntropyMetric(monotonic, gs) : Metric.createEntropyMetric(monotonic));
        }
        else if (metric.equals("normalized-entropy")) config.setQualityModel(Metric.createNormalizedEntropyMetric());
        else if (metric.equals("kl")) config.setQualityModel(Metric.createKLDivergenceMetric());
        else if (metric.equals("discernibility-monotonic")) config.setQualityModel(Metric.createDiscernabilityMetric(true));
        else if (metric.startsWith("discern")) config.setQualityModel(Metric.createDiscernabilityMetric());
        else throw new IllegalArgumentException(metric);
        if (o.containsKey("heuristic")) { // ARX's best-effort search (bottom-up = Lightning, or genetic) with a time limit in ms
            config.setAlgorithm(o.getOrDefault("algorithm", "bottomup").equals("genetic")
                ? ARXConfiguration.AnonymizationAlgorithm.BEST_EFFORT_GENETIC : ARXConfiguration.AnonymizationAlgorithm.BEST_EFFORT_BOTTOM_UP);
            config.setHeuristicSearchTimeLimit(Integer.parseInt(o.get("heuristic")));
        }
        if (o.containsKey("threshold")) config.setHeuristicSearchThreshold(Integer.parseInt(o.get("threshold")));

        ARXAnonymizer anonymizer = new ARXAnonymizer();
        List<Double> times = new ArrayList<>(), outTimes = new ArrayList<>();
        ARXResult last = null;
        if (o.getOrDefault("mode", "batch").equals("serve")) {
            // Interleaving mode: one anonymize() per "run" line on stdin (a "warm" line = untimed-by-driver warm-up);
            // prints {"ms":..,"out_ms":..} per line; "quit" prints the summary JSON below.
            java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(System.in));
            System.out.println("{\"ready\":true,\"load_ms\":" + String.format(Locale.ROOT, "%.1f", loadNs / 1e6) + "}");
            System.out.flush();
            String line; warm = 0; runs = 0;
            while ((line = in.readLine()) != null) {
                line = line.trim();
                if (line.equals("quit")) break;
                boolean timed = line.equals("run");
                data.getHandle().release();
                System.gc();
                long t0 = System.nanoTime();
                ARXResult res = anonymizer.anonymize(data, config);
                long t1 = System.nanoTime();
                double outMs = -1;
                if (timeOutput && res.getGlobalOptimum() != null) {
                    long t2 = System.nanoTime(); res.getOutput(false); outMs = (System.nanoTime() - t2) / 1e6;
                }
                if (timed) { times.add((t1 - t0) / 1e6); if (outMs >= 0) outTimes.add(outMs); runs++; } else warm++;
                last = res;
                ARXNode ro = res.getGlobalOptimum();
                String rt = ro == null ? "null" : Arrays.toString(ro.getTransformation());
                String rs = ro == null ? "" : ro.getHighestScore().toString();
                System.out.println(String.format(Locale.ROOT, "{\"ms\":%.2f,\"out_ms\":%.2f,\"search_ms\":%d,\"t\":%s,\"score\":\"%s\",\"checked\":%d}", (t1 - t0) / 1e6, outMs, res.getTime(), rt, rs, res.getProcessStatistics().getTransformationsChecked()));
                System.out.flush();
            }
        } else {
        for (int r = 0; r < warm + runs; r++) {
            data.getHandle().release();
            System.gc();
            long t0 = System.nanoTime();
            ARXResult res = anonymizer.anonymize(data, config);
            long t1 = System.nanoTime();
            if (timeOutput && res.getGlobalOptimum() != null) {
                long t2 = System.nanoTime();
                DataHandle out = res.getOutput(false);
                long t3 = System.nanoTime();
                if (r >= warm) outTimes.add((t3 - t2) / 1e6);
            }
            if (r >= warm) times.add((t1 - t0) / 1e6);
            last = res;
        }
        }
        ARXNode opt = last.getGlobalOptimum();
        double saveMs = -1;
        if (o.containsKey("save") && opt != null) {
            long ts0 = System.nanoTime();
            last.getOutput(false).save(o.get("save"), ';');
            saveMs = (System.nanoTime() - ts0) / 1e6;
        }
        StringBuilder sb = new StringBuilder("{");
        sb.append("\"save_ms\":").append(String.format(Locale.ROOT, "%.1f", saveMs)).append(",");
        sb.append("\"id\":\"").append(o.getOrDefault("id", "")).append("\",");
        sb.append("\"rows\":").append(data.getHandle().getNumRows()).append(",");
        sb.append("\"load_ms\":").append(String.format(Locale.ROOT, "%.1f", loadNs / 1e6)).append(",");
        sb.append("\"transformation\":{");
        if (opt != null) {
            String[] qi = opt.getQuasiIdentifyingAttributes();
            int[] tr = opt.getTransformation();
            for (int i = 0; i < qi.length; i++) sb.append(i > 0 ? "," : "").append("\"").append(qi[i]).append("\":").append(tr[i]);
        }
        sb.append("},");
        sb.append("\"highest_score\":\"").append(opt == null ? "" : opt.getHighestScore().toString()).append("\",");
        sb.append("\"lowest_score\":\"").append(opt == null ? "" : opt.getLowestScore().toString()).append("\",");
        ARXProcessStatistics st = last.getProcessStatistics();
        sb.append("\"transformations_checked\":").append(st.getTransformationsChecked()).append(",");
        long latticeChecked = 0, latticeTotal = 1;
        for (ARXLattice.ARXNode[] lvl : last.getLattice().getLevels()) for (ARXLattice.ARXNode n : lvl) { if (n.isChecked()) latticeChecked++; }
        for (int t : last.getLattice().getTop().getTransformation()) latticeTotal *= (t + 1);
        sb.append("\"lattice_checked\":").append(latticeChecked).append(",");
        sb.append("\"lattice_size\":").append(latticeTotal).append(",");
        sb.append("\"process_duration_ms\":").append(st.getDuration()).append(",");
        List<Double> s = new ArrayList<>(times); Collections.sort(s);
        sb.append("\"anonymize_ms_median\":").append(String.format(Locale.ROOT, "%.2f", median(s))).append(",");
        sb.append("\"anonymize_ms_min\":").append(String.format(Locale.ROOT, "%.2f", s.get(0))).append(",");
        sb.append("\"anonymize_ms_all\":").append(fmt(times));
        if (timeOutput) { List<Double> so = new ArrayList<>(outTimes); Collections.sort(so);
            sb.append(",\"getOutput_ms_median\":").append(so.isEmpty() ? "null" : String.format(Locale.ROOT, "%.2f", median(so))); }
        sb.append(",\"warmup\":").append(warm).append(",\"runs\":").append(runs);
        sb.append("}");
        System.out.println(sb);
    }
    static double median(List<Double> s) { int n = s.size(); return n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2; }
    static String fmt(List<Double> l) { StringBuilder b = new StringBuilder("["); for (int i = 0; i < l.size(); i++) b.append(i > 0 ? "," : "").append(String.format(Locale.ROOT, "%.2f", l.get(i))); return b.append("]").toString(); }
}
