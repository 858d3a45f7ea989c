# The lab's workload on kairos_policy_sim, sourced by simulate.sh and sim_scenario.sh
# (docs/lab.md#the-simulator-against-the-lab), so that both run and summarize it one way.

# lab_sim SCENARIO SPEC LR FIRST_SEED SEEDS CSV: the seeds FIRST_SEED .. + SEEDS - 1 of one
# policy at one rate, the example's MLP at the lab's pace and scenario, the lab's averaged
# evaluation and smoothed time to target, stopped there or at budget_s; one row per seed in
# CSV, the program's output beside it (.log). Reads: sim hidden train test batch workers
# pace_ms latency_ms read_ms apply_ms bandwidth_mbps average_s snapshot_s target budget_s
# noise (the iterations' timing noise: a jitter of that mean fraction, shifted to keep the
# mean; 0 when unset) and the arrays sim_worker_flags and extra (more flags of
# kairos_policy_sim).
lab_sim() {
  local flags
  read -r -a flags <<<"$(lab_scenario_flags "$1" "$workers")"
  "$sim" --model mlp --hidden "$hidden" --fashion-train "$train" --fashion-test "$test" \
    --batch "$batch" --workers "$workers" --compute-ms "$pace_ms" --slow-factor 1 \
    --jitter "${noise:-0}" --jitter-shift "$(awk -v n="${noise:-0}" 'BEGIN { print 1 - n }')" \
    "${flags[@]}" --latency-ms "$latency_ms" --server-read-ms "$read_ms" \
    --server-apply-ms "$apply_ms" ${sim_worker_flags[@]+"${sim_worker_flags[@]}"} \
    --bandwidth-gbps "$(awk -v m="$bandwidth_mbps" 'BEGIN { print m / 1000 }')" \
    --average-s "$average_s" --sample-ms "$(awk -v s="$snapshot_s" 'BEGIN { print 1000 * s }')" \
    --target-accuracy "$target" --smoothed-target --stop-at-target --max-time-s "$budget_s" \
    --policies "$2" --lr "$3" --seed "$4" --seeds "$5" --csv "$6" ${extra[@]+"${extra[@]}"} \
    >"${6%.csv}.log" 2>&1 ||
    { echo "$(basename "$0"): $1 $2 lr $3 failed; see ${6%.csv}.log" >&2; return 1; }
}

# lab_sim_summary SCENARIO POLICY LR CSV: the seeds of CSV as a row of scenario.sh's
# summary.tsv: runs, reached, the median time to target ("none" when at most half reached
# it), its range, mean final accuracy, iterations per second and share of time blocked (the
# workers' time in pulls, as the lab counts it; worker 0's alone when rank0 is 1, as a lab
# run through shaped links reports them). Reads: workers, rank0 (default 0).
lab_sim_summary() {
  awk -F, -v s="$1" -v p="$2" -v lr="$3" -v w="$workers" -v rank0="${rank0:-0}" '
    function median(a, n,   i, j, t) {
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    NR > 1 {
      o = NF - 20; n++   # the policy may hold commas: the numeric columns are the last
      if ($(3 + o) != "") {
        t[n] = $(3 + o); r++
        if (r == 1 || t[n] < lo) lo = t[n]
        if (t[n] > hi) hi = t[n]
      } else {
        t[n] = 1e300
      }
      acc += $(5 + o)
      if (rank0) {
        ips += ($(6 + o) > 0 ? $(17 + o) / $(6 + o) : 0)
        blocked += ($(6 + o) > 0 ? $(18 + o) / $(6 + o) : 0)
      } else {
        ips += $(8 + o); blocked += ($(6 + o) > 0 ? $(16 + o) / (w * $(6 + o)) : 0)
      }
    }
    END {
      m = median(t, n)
      printf "%s\t%s\t%s\t%d\t0\t%d\t%s\t%s\t%s\t0\t%.4f\t%.1f\t%.3f\t0\n", s, p, lr, n, r,
        (2 * r > n ? sprintf("%.2f", m) : "none"), (r ? sprintf("%.2f", lo) : "none"),
        (r ? sprintf("%.2f", hi) : "none"), acc / n, ips / n, blocked / n
    }' "$4"
}

lab_summary_header='scenario	policy	lr	runs	failed	reached	time_to_target_median	time_to_target_min	time_to_target_max	time_to_target_cv	final_accuracy_mean	iterations_per_s_mean	blocked_share_mean	overruns'

lab_safe_name() { tr -c 'A-Za-z0-9._-' '_' <<<"$1" | sed 's/_$//'; }
