# Sourced by the browser checks: Debian's chromium installed if missing, and
# `render PAGE FLAG` (headless, offline, a throwaway profile; FLAG is
# --dump-dom or --screenshot=FILE), logging to "$out/chromium.log".
if ! command -v chromium >/dev/null 2>&1; then
    echo "installing Debian's chromium (headless rendering of the pages)"
    sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
fi

render() { # page, then chromium's output flag (--dump-dom or --screenshot=FILE)
    local profile
    profile=$(mktemp -d)
    timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$profile" --window-size="${window:-1400,2600}" --hide-scrollbars "$2" "file://$PWD/$1" 2>>"$out/chromium.log"
    rm -rf "$profile"
}
