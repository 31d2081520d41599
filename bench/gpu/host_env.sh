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

# The Ray cluster the jobs run on (bench/ray_jobs.py, `regrapht eval --ray`): RAY_ADDRESS if set,
# else a local head started here with this host's GPUs (one logical GPU on a machine without
# one: a dry run), stopped by ray_head_stop. Ray comes from the host's site (RAY_WHEELS) or pip.
ray_head_start() {
    if [ -n "${RAY_WHEELS:-}" ] && ! python3 -c 'import ray' 2>/dev/null; then
        python3 -m pip install -q --no-index --no-deps --target "$SITE" "$RAY_WHEELS"/*.whl 2>&1 | tail -3
    fi
    # token authentication on, explicitly for the head and every driver of this shell (Ray 2.5x
    # defaults: a driver given an address does not always pick the head's token up by itself)
    export RAY_AUTH_MODE=${RAY_AUTH_MODE:-token}
    # Ray >= 2.60 refuses to start a token head without a token: one for this shell's head and
    # drivers, in a private temporary file (nothing is written to ~/.ray)
    if [ "$RAY_AUTH_MODE" = token ] && [ -z "${RAY_AUTH_TOKEN:-}" ] && [ -z "${RAY_AUTH_TOKEN_PATH:-}" ] \
        && [ ! -f "$HOME/.ray/auth_token" ]; then
        RAY_AUTH_TOKEN_PATH=$(mktemp /tmp/regrapht-ray-token.XXXXXX)
        python3 -c 'import secrets; print(secrets.token_hex(32))' > "$RAY_AUTH_TOKEN_PATH"
        export RAY_AUTH_TOKEN_PATH
    fi
    if [ -n "${RAY_ADDRESS:-}" ]; then RAY_STARTED=0; return 0; fi
    python3 -m ray.scripts.scripts start --head --port "${RAY_PORT:-6379}" --num-gpus "$(( GPUS > 0 ? GPUS : 1 ))" \
        --include-dashboard false --disable-usage-stats > "${RAY_LOG:-/tmp/ray-start.log}" 2>&1 \
        || { cat "${RAY_LOG:-/tmp/ray-start.log}"; return 2; }
    export RAY_ADDRESS="127.0.0.1:${RAY_PORT:-6379}"
    RAY_STARTED=1
}
ray_head_stop() {
    [ "${RAY_STARTED:-0}" = 1 ] && python3 -m ray.scripts.scripts stop > /dev/null 2>&1
    return 0
}
