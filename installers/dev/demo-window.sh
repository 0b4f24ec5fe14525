# shellcheck shell=bash
# Sourced by run-demo.sh (and by its test): decides who opens the window. The window never
# runs as root (README, docs/architecture.md); as root it runs as the desktop user that called
# sudo, and as root without one nobody opens it.

# demo_window_plan EUID SUDO_USER DISPLAY_SET
#   prints "none" (no display), "self" (not root: this user opens it), "sudo-user" (root
#   through sudo: SUDO_USER opens it) or "refuse-root" (root without SUDO_USER).
demo_window_plan() {
    local euid=$1 sudo_user=$2 display_set=$3
    if [ "$display_set" != 1 ]; then
        echo none
    elif [ "$euid" != 0 ]; then
        echo self
    elif [ -n "$sudo_user" ] && [ "$sudo_user" != root ]; then
        echo sudo-user
    else
        echo refuse-root
    fi
}
