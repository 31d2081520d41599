# Sourced by the bench/gpu/run_*.sh scripts: the GPU host's Python environment.
# The host lacks pycuda, tree-sitter and the rest: they come from the host's cp312 wheels in $WHEELS
# (default .gpu/wheels in the checkout, git-ignored), installed once into $SITE. Then PYTHONPATH
# points at the checkout's server/ and $SITE, and GPUS holds the number of CUDA devices (0 if none).
# GPU_IDS (e.g. "1" or "0 1") restricts a run to those devices: GPU_LIST holds the device numbers
# to use and GPUS their count (jobs go round-robin over GPU_LIST).
host_python_env() {
    local wheels=${WHEELS:-.gpu/wheels}
    if ! python3 -c 'import pycuda, tree_sitter' 2>/dev/null && ls "$wheels"/*.whl >/dev/null 2>&1; then
        python3 -m pip install -q --no-index --no-deps --target "$SITE" "$wheels"/*.whl 2>&1 | tail -3
    fi
    export PYTHONPATH="$PWD/server:$SITE${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
    GPUS=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | wc -l)
    if [ -n "${GPU_IDS:-}" ] && [ "$GPUS" -ge 1 ]; then
        read -r -a GPU_LIST <<< "$GPU_IDS"
        GPUS=${#GPU_LIST[@]}
    else
        read -r -a GPU_LIST <<< "$(seq -s " " 0 $(( GPUS > 0 ? GPUS - 1 : 0 )))"
    fi
}
