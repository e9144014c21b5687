# Shared helpers of the bench/*.sh scripts (sourced, not run).

# median_ms CMD ARGS…: the median of three runs of a command, in
# milliseconds, each after `sync`; {} in the command is replaced by the
# run number.
median_ms() {
  local times=()
  for run in 1 2 3; do
    local cmd=("${@//\{\}/$run}")
    sync
    local t0 t1
    t0=$(date +%s%N)
    "${cmd[@]}" >/dev/null
    t1=$(date +%s%N)
    times+=($(((t1 - t0) / 1000000)))
  done
  printf '%s\n' "${times[@]}" | sort -n | sed -n 2p
}
