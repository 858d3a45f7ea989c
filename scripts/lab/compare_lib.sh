# Two summaries of the same lab scenarios compared on the simulator's acceptance
# (docs/simulator_results.md#the-simulator-against-the-lab), sourced by scenario.sh (the
# verdict), simulate.sh (the simulator against the lab) and agreement.sh (the lab against
# itself). A summary is scenario.sh's summary.tsv: one row per scenario and policy.

# lab_leads SUMMARY NOISE: per scenario, the policies that reached the target in every seed
# without a failure, each as "scenario<TAB>policy<TAB>median<TAB>role", role "best" (the
# soonest median), "lead" (within the noise of the best: its fastest seed no later than the
# best's slowest, or its median at most NOISE, a fraction, above the best's) or "behind".
# The verdict's rule: a winner is named only when nothing else is in the lead.
lab_leads() {
  awk -F'\t' -v OFS='\t' -v noise="$2" 'NR > 1 && $6 == $4 && $5 == 0 && $7 != "" && $7 != "none" {
      if (!($1 in n)) order[++scenarios] = $1
      k = ++n[$1]; pol[$1, k] = $2; med[$1, k] = $7 + 0; lo[$1, k] = $8 + 0; hi[$1, k] = $9 + 0
      if (k == 1 || med[$1, k] < med[$1, best[$1]]) best[$1] = k
    } END {
      for (i = 1; i <= scenarios; i++) {
        s = order[i]; b = best[s]
        for (k = 1; k <= n[s]; k++) {
          role = k == b ? "best" : (lo[s, k] <= hi[s, b] || med[s, k] <= med[s, b] * (1 + noise) ? "lead" : "behind")
          print s, pol[s, k], med[s, k], role
        }
      }
    }' "$1"
}

# lab_compare REF OTHER NAME: compare.tsv, one row per scenario and policy in both summaries
# (REF's order): REF's ("lab") and OTHER's (NAME) median time to target ("-" when at most
# half of the seeds reached it) and the relative error, iterations per second and relative
# error, share of time blocked and the difference in points.
lab_compare() {
  printf 'scenario\tpolicy\tlr\tlab_time_s\t%s_time_s\ttime_error\tlab_it_s\t%s_it_s\tit_s_error\tlab_blocked\t%s_blocked\tblocked_points\n' \
    "$3" "$3" "$3"
  awk -F'\t' -v OFS='\t' 'FNR == NR { if (FNR > 1) other[$1 "\t" $2] = $0; next }
    FNR > 1 && (($1 "\t" $2) in other) {
      split(other[$1 "\t" $2], m, "\t")
      # A median counts when more than half of the seeds reached the target.
      lt = (2 * $6 > $4 ? $7 : "-"); st = (2 * m[6] > m[4] ? m[7] : "-")
      te = (lt != "-" && st != "-") ? sprintf("%+.1f%%", 100 * (st - lt) / lt) : "-"
      print $1, $2, $3, lt, st, te, sprintf("%.1f", $12), sprintf("%.1f", m[12]),
        sprintf("%+.1f%%", 100 * (m[12] - $12) / $12), sprintf("%.1f%%", 100 * $13),
        sprintf("%.1f%%", 100 * m[13]), sprintf("%+.1f", 100 * (m[13] - $13))
    }' "$2" "$1"
}

# lab_compare_report COMPARE REF OTHER NAME NOISE [SKIP...]: prints COMPARE as a table, then
# per scenario both verdicts' leads (lab_leads) and whether they agree: each side's best is in
# the other's lead (where the lab names a winner beyond the noise, NAME must pick it; where
# several share the lab's lead, NAME's pick must be one of them and the lab's best in NAME's
# lead), with the lab time of NAME's pick over the lab's best; then the counts against the
# acceptance: cells with iterations per second within 3 %, blocked within 3 points, time to
# target within 10 %, and scenarios whose winners agree. Policies named in SKIP are shown but
# neither counted nor in the verdicts.
lab_compare_report() {
  local compare=$1 ref=$2 other=$3 name=$4 noise=$5
  shift 5
  local skip
  skip=$(printf '%s\n' "$@")
  # The rows of a table (summary or compare.tsv, the policy second) but the skipped policies'.
  without_skipped() {
    awk -F'\t' -v skip="$skip" 'BEGIN { split(skip, s, "\n"); for (i in s) x[s[i]] = 1 }
      !($2 in x)' "$1"
  }
  awk -F'\t' '{ printf "%-12s %-42s %8s %10s %10s %10s %9s %9s %10s %11s %11s %14s\n",
    $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12 }' "$compare"
  {
    lab_leads <(without_skipped "$ref") "$noise" | sed 's/^/lab\t/'
    lab_leads <(without_skipped "$other") "$noise" | sed 's/^/other\t/'
    without_skipped "$compare" | awk 'NR > 1 { print "cell\t" $0 }'
  } | awk -F'\t' -v name="$name" -v noise="$noise" '
    function abs(v) { return v < 0 ? -v : v }
    function num(v) { sub(/%$/, "", v); return v + 0 }
    $1 == "lab" || $1 == "other" {
      if (!(($2) in seen)) { seen[$2] = 1; order[++n] = $2 }
      role[$1, $2, $3] = $5; t[$1, $2, $3] = $4
      if ($5 == "best") best[$1, $2] = $3
      lead[$1, $2] = lead[$1, $2] ($5 == "behind" ? "" : (lead[$1, $2] == "" ? "" : " | ") $3)
      next
    }
    $1 == "cell" {
      cells++
      if (abs(num($10)) <= 3) its++
      if (abs(num($13)) <= 3) blocked++
      if ($7 != "-") { timed++; if (abs(num($7)) <= 10) times++ }
    }
    END {
      for (i = 1; i <= n; i++) {
        s = order[i]; lb = best["lab", s]; ob = best["other", s]
        agree = lb != "" && ob != "" && role["lab", s, ob] != "" && role["lab", s, ob] != "behind" &&
          role["other", s, lb] != "" && role["other", s, lb] != "behind"
        regret = (lb != "" && ob != "" && t["lab", s, ob] != "") ? sprintf("%+.1f%%", 100 * (t["lab", s, ob] / t["lab", s, lb] - 1)) : "-"
        agreed += agree
        printf "%s: lab lead %s; %s lead %s; %s (the lab time of the %s pick over the lab best: %s)\n",
          s, (lb == "" ? "none" : lead["lab", s]), name, (ob == "" ? "none" : lead["other", s]),
          (agree ? "the winners agree" : "the winners differ"), name, regret
      }
      printf "against the acceptance (noise %.0f %%): iterations/s within 3 %% in %d of %d cells, blocked within 3 points in %d of %d, time to target within 10 %% in %d of %d, winners agree in %d of %d scenarios\n",
        100 * noise, its, cells, blocked, cells, times, timed, agreed, n
    }'
}
