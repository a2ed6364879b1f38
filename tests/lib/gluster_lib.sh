# A GlusterFS replica-2 volume on this machine for the cluster test and benchmark
# (tests/cluster/cluster_gluster.sh, contrib/bench-cluster): glusterd, two bricks under a
# scratch directory named by the hostname (gluster refuses 127.0.0.1 as a brick host; all
# traffic stays on loopback), the caching translators off, and the volume mounted twice
# through gluster's FUSE client with zero cache timeouts: two hosts in miniature.
# Needs root. Source it, set GL_DIR (scratch directory), then:
#   gl_start             glusterd (unless running), the volume GL_VOL, clients GL_C1, GL_C2;
#                        returns non-zero with the reason in GL_ERR
#   gl_stop              unmounts the clients, stops and deletes the volume, stops the
#                        glusterd it started; afterwards gl_leftovers lists what still runs
#   gl_brick_pid N       pid of brick N's server (glusterfsd); bricks are GL_BRICK1, GL_BRICK2
#   gl_brick_online N    whether glusterd lists brick N online
#   gl_brick_restart N   starts brick N's server again (volume start force, retried: glusterd
#                        can take a killed brick for a running one for a moment)
#   gl_heal_wait SECS    waits until both bricks are up and the volume has nothing to heal
GL_VOL=b2fs-test-$$
GL_HOST=$(hostname)
gl_started_glusterd=0

gl_cli() { gluster --mode=script "$@"; }

gl_start() {
    GL_ERR=
    GL_BRICK1=$GL_DIR/brick1 GL_BRICK2=$GL_DIR/brick2 GL_C1=$GL_DIR/client1 GL_C2=$GL_DIR/client2
    mkdir -p "$GL_BRICK1" "$GL_BRICK2" "$GL_C1" "$GL_C2"
    local p
    for p in gluster glusterd glusterfs; do
        command -v $p >/dev/null || { GL_ERR="$p is not installed (Debian: glusterfs-server, glusterfs-client; contrib/install-deps)"; return 1; }
    done
    if ! gl_cli pool list >/dev/null 2>&1; then
        glusterd -p "$GL_DIR/glusterd.pid" --log-file="$GL_DIR/glusterd.log" ||
            { GL_ERR="glusterd did not start: $(tail -n 3 "$GL_DIR/glusterd.log" 2>/dev/null)"; return 1; }
        gl_started_glusterd=1
        local i
        for i in $(seq 1 100); do gl_cli pool list >/dev/null 2>&1 && break; sleep 0.1; done
        gl_cli pool list >/dev/null 2>&1 || { GL_ERR="glusterd does not answer: $(tail -n 3 "$GL_DIR/glusterd.log")"; return 1; }
    fi
    gl_cli volume create "$GL_VOL" replica 2 "$GL_HOST:$GL_BRICK1" "$GL_HOST:$GL_BRICK2" force \
        >"$GL_DIR/create.log" 2>&1 || { GL_ERR="volume create: $(cat "$GL_DIR/create.log")"; return 1; }
    # coherence between clients: no client-side caching of data or metadata
    local o
    for o in performance.write-behind performance.read-ahead performance.io-cache \
             performance.quick-read performance.stat-prefetch performance.open-behind \
             performance.readdir-ahead performance.nl-cache; do
        gl_cli volume set "$GL_VOL" "$o" off >/dev/null 2>&1 || { GL_ERR="volume set $o off failed"; return 1; }
    done
    # a killed brick is noticed within seconds, not the default 42
    gl_cli volume set "$GL_VOL" network.ping-timeout 5 >/dev/null 2>&1
    gl_cli volume start "$GL_VOL" >"$GL_DIR/start.log" 2>&1 ||
        { GL_ERR="volume start: $(cat "$GL_DIR/start.log")"; return 1; }
    local c
    for c in "$GL_C1" "$GL_C2"; do
        glusterfs --volfile-server="$GL_HOST" --volfile-id="$GL_VOL" --attribute-timeout=0 \
            --entry-timeout=0 --negative-timeout=0 --log-file="$GL_DIR/$(basename "$c").log" "$c" ||
            { GL_ERR="client mount on $c failed"; return 1; }
        for i in $(seq 1 100); do mountpoint -q "$c" && break; sleep 0.1; done
        mountpoint -q "$c" || { GL_ERR="client $c did not mount: $(tail -n 3 "$GL_DIR/$(basename "$c").log")"; return 1; }
    done
    return 0
}

gl_brick_pid() {
    local b=$GL_BRICK1
    [ "$1" = 2 ] && b=$GL_BRICK2
    pgrep -f "glusterfsd.*--brick-name $b( |$)" | head -n 1
}

gl_brick_online() {
    local b=$GL_BRICK1
    [ "$1" = 2 ] && b=$GL_BRICK2
    # (the XML: the text form wraps long brick names onto two lines)
    gl_cli volume status "$GL_VOL" "$GL_HOST:$b" --xml 2>/dev/null | grep -q '<status>1</status>'
}

gl_brick_restart() {
    local i j
    for i in $(seq 1 15); do
        gl_cli volume start "$GL_VOL" force >/dev/null 2>&1
        for j in $(seq 1 10); do gl_brick_online "$1" && return 0; sleep 0.2; done
    done
    return 1
}

gl_heal_wait() {
    local i n
    for i in $(seq 1 $(($1 * 2))); do
        # "-" entries: a brick not connected, nothing known yet
        n=$(gl_cli volume heal "$GL_VOL" info 2>/dev/null |
            awk '/^Number of entries:/ { s += ($4 == "-" ? 1 : $4); seen = 1 } END { print seen ? s : -1 }')
        [ "$n" = 0 ] && return 0
        gl_cli volume heal "$GL_VOL" >/dev/null 2>&1
        sleep 0.5
    done
    return 1
}

gl_stop() {
    local c i
    for c in "${GL_C1:-}" "${GL_C2:-}"; do
        [ -n "$c" ] || continue
        for i in $(seq 1 20); do mountpoint -q "$c" || break; umount "$c" 2>/dev/null || sleep 0.2; done
        mountpoint -q "$c" && umount -l "$c"
    done
    if gl_cli volume info "$GL_VOL" >/dev/null 2>&1; then
        gl_cli volume stop "$GL_VOL" force >/dev/null 2>&1
        gl_cli volume delete "$GL_VOL" >/dev/null 2>&1
    fi
    # brick servers of this volume that did not stop with it
    pkill -9 -f "glusterfsd.*$GL_VOL" 2>/dev/null
    if [ "$gl_started_glusterd" = 1 ]; then
        [ -f "$GL_DIR/glusterd.pid" ] && kill "$(cat "$GL_DIR/glusterd.pid")" 2>/dev/null
        for i in $(seq 1 50); do pgrep -x glusterd >/dev/null || break; sleep 0.1; done
        pkill -9 -x glusterd 2>/dev/null
        # the self-heal daemon and other helpers glusterd started
        pkill -f "glusterfs.*/var/run/gluster" 2>/dev/null
        pkill -f "glustershd" 2>/dev/null
        sleep 0.3
    fi
    return 0
}

# What of gluster still runs after gl_stop (empty when nothing)
gl_leftovers() {
    {
        pgrep -af "glusterfsd.*$GL_VOL"
        pgrep -af "glusterfs.*--volfile-id=$GL_VOL"
        [ "$gl_started_glusterd" = 1 ] && pgrep -ax glusterd
        [ "$gl_started_glusterd" = 1 ] && pgrep -af glustershd
        grep " ${GL_DIR:-/nonexistent}/" /proc/mounts
    } 2>/dev/null
}
