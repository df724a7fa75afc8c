# Optional addon, built by scripts/install.cjs (node-gyp rebuild); a failed
# build never fails the install. N-API version 8 (Node >= 12.22), so one
# binary serves Node 20, 22 and 24. C++ exceptions are off everywhere
# (node-addon-api's NODE_ADDON_API_DISABLE_CPP_EXCEPTIONS). -O2 instead of
# node's -O3. No -msse4.2: the hardware CRC functions carry
# __attribute__((target("sse4.2"))) and are only called after a run-time
# __builtin_cpu_supports check, so the binary runs on any x86-64.
{
  "targets": [
    {
      "target_name": "seglog_native",
      "sources": [
        "csrc/addon.cc",
        "csrc/crc32c.cc",
        "csrc/crc32c-sse42.cc",
        "csrc/crc32c-binding.cc",
        "csrc/fs-ops.cc",
        "csrc/sendfile.cc",
        "csrc/pwritev-datasync.cc",
        "csrc/pwritev-many.cc",
        "csrc/aligned-alloc.cc",
        "csrc/batch-index.cc",
        "csrc/batch-scan.cc"
      ],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "defines": [
        "NAPI_VERSION=8",
        "NODE_ADDON_API_DISABLE_CPP_EXCEPTIONS",
        "NODE_ADDON_API_DISABLE_DEPRECATED",
        "_GNU_SOURCE"
      ],
      "cflags!": ["-O3", "-fexceptions"],
      "cflags_cc!": ["-O3", "-fexceptions"],
      "cflags": ["-O2", "-Wall", "-Wextra", "-fvisibility=hidden", "-fno-exceptions"],
      "cflags_cc": ["-O2", "-fno-exceptions"],
      "xcode_settings": {
        "GCC_ENABLE_CPP_EXCEPTIONS": "NO",
        "GCC_OPTIMIZATION_LEVEL": "2",
        "OTHER_CFLAGS": ["-fvisibility=hidden"]
      }
    }
  ]
}
