# Sourced (from the repository's top) by scripts/test-cross and scripts/test-all
# before a cross build: the cross files run the compilers under ccache, whose
# cache lives outside the clone ($CLDMABUF_CCACHE_DIR, default
# /var/cache/cldmabuf-ccache, like the VM images) and is keyed without the
# clone's path, so a CI run after the first compiles only what changed.
export CCACHE_DIR=${CLDMABUF_CCACHE_DIR:-/var/cache/cldmabuf-ccache}
export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=true CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-3G}
mkdir -p "$CCACHE_DIR" 2>/dev/null || export CCACHE_DISABLE=1
