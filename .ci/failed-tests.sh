# Sourced by the .ci scripts: notes which tests a ctest run failed, so that .ci/run can
# list them again at its very end, where a CI log's tail shows them.
# Usage, in a build directory: ctest ... || { status=$?; note_failed_tests "<phase>"; }
note_failed_tests() { # <phase>
    local list="${GR_SPEAD_CI_FAILURES:-}"
    [ -n "$list" ] || return 0
    {
        echo "$1:"
        if [ -s Testing/Temporary/LastTestsFailed.log ]; then
            sed 's/^/    /' Testing/Temporary/LastTestsFailed.log
        else
            echo "    (ctest failed without a list of failed tests)"
        fi
    } >>"$list"
}
