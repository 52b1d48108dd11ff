# Stage timing for the README's commands (sourced by scripts/test.sh and scripts/quickstart.sh):
#   stage NAME BUDGET_S FUNCTION [ARGS...]   runs one stage, then prints "-- NAME: N s (budget B s)"
# At exit, whether the run passed or failed, every stage's time is printed again with the total, and a
# failure names the stage it happened in.
TV_STAGE_NAMES=()
TV_STAGE_SECS=()
TV_STAGE_BUDGETS=()
TV_STAGE_CURRENT=""
TV_STAGE_T0=$SECONDS
TV_TESTS_PASSED=0  # the ctest runs' counts, added up by whoever runs them; the last line when any ran
TV_TESTS_FAILED=0

stage() {
  local name=$1 budget=$2
  shift 2
  echo "== $name =="
  TV_STAGE_CURRENT=$name
  local t=$SECONDS
  "$@"
  local dt=$((SECONDS - t))
  TV_STAGE_CURRENT=""
  TV_STAGE_NAMES+=("$name")
  TV_STAGE_SECS+=("$dt")
  TV_STAGE_BUDGETS+=("$budget")
  echo "-- $name: $dt s (budget $budget s)"
}

stage_summary() {
  local rc=$? i over=""
  [ ${#TV_STAGE_NAMES[@]} -gt 0 ] || [ -n "$TV_STAGE_CURRENT" ] || return $rc
  echo "== stage times =="
  for i in "${!TV_STAGE_NAMES[@]}"; do
    over=""
    [ "${TV_STAGE_SECS[$i]}" -le "${TV_STAGE_BUDGETS[$i]}" ] || over="  (over budget)"
    printf '%6d s  of %5d s  %s%s\n' "${TV_STAGE_SECS[$i]}" "${TV_STAGE_BUDGETS[$i]}" "${TV_STAGE_NAMES[$i]}" "$over"
  done
  if [ -n "$TV_STAGE_CURRENT" ]; then
    echo "FAILED in stage '$TV_STAGE_CURRENT' (exit $rc)"
  fi
  printf 'total: %d s (%d min %02d s)\n' $((SECONDS - TV_STAGE_T0)) $(((SECONDS - TV_STAGE_T0) / 60)) \
    $(((SECONDS - TV_STAGE_T0) % 60))
  if [ $((TV_TESTS_PASSED + TV_TESTS_FAILED)) -gt 0 ]; then
    echo "tests: $TV_TESTS_PASSED passed, $TV_TESTS_FAILED failed"
  fi
  return $rc
}
trap stage_summary EXIT

# tv_configure DIR CMAKE_ARGS...: configures a build folder, quietly, with Ninja (install-deps installs
# ninja-build; it schedules the 2 cores better than make). A folder configured earlier keeps its generator.
tv_configure() {
  local dir=$1
  shift
  local gen=()
  if [ ! -f "$dir/CMakeCache.txt" ] && command -v ninja >/dev/null; then gen=(-G Ninja); fi
  cmake "${gen[@]}" -S . -B "$dir" "$@" >/dev/null
}
