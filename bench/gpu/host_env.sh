# Sourced by the bench/gpu/run_*.sh scripts: the GPU host's Python environment.
# The host lacks pycuda, tree-sitter and the rest: they come from the host's cp312 wheels in $WHEELS
# (default .gpu/wheels in the checkout, git-ignored), installed once into $SITE. Then PYTHONPATH
# points at the checkout's server/ and $SITE, and GPUS holds the number of CUDA devices (0 if none).
host_python_env() {
    local wheels=${WHEELS:-.gpu/wheels}
    if ! python3 -c 'import pycuda, tree_sitter' 2>/dev/null && ls "$wheels"/*.whl >/dev/null 2>&1; then
        python3 -m pip install -q --no-index --no-deps --target "$SITE" "$wheels"/*.whl 2>&1 | tail -3
    fi
    export PYTHONPATH="$PWD/server:$SITE${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
    GPUS=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | wc -l)
}
