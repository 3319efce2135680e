// app.cpp — the consumer program in C++: parprim.h is plain C behind extern "C", and a
// project that enables only C++ links parprim like any other C library.
#include <parprim.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

int main() {
  const std::string header = std::to_string(PARPRIM_VERSION_MAJOR) + "." +
                             std::to_string(PARPRIM_VERSION_MINOR) + "." +
                             std::to_string(PARPRIM_VERSION_PATCH);
  if (header != pp_version()) {
    std::fprintf(stderr, "header %s, library %s\n", header.c_str(), pp_version());
    return 1;
  }
  pp_context *ctx = nullptr;
  if (pp_create(&ctx, PP_BACKEND_AUTO) != PP_OK) {
    std::fprintf(stderr, "pp_create: %s\n", pp_last_error(nullptr));
    return 1;
  }
  std::vector<float> v(1000);
  for (size_t i = 0; i < v.size(); i++) v[i] = static_cast<float>((i * 7919) % v.size());
  std::vector<float> expected = v;
  std::sort(expected.rbegin(), expected.rend());
  const pp_sort_opts descending = {PP_DESCENDING, PP_SORT_AUTO};
  float top[3];
  bool ok = pp_sort(ctx, PP_F32, v.data(), nullptr, 0, v.size(), &descending) == PP_OK &&
            pp_topk(ctx, PP_F32, v.data(), v.size(), 3, true, top, nullptr) == PP_OK &&
            v == expected && top[0] == 999.0f && top[2] == 997.0f;
  std::printf("parprim %s from C++ (%s backend): %s\n", pp_version(),
              pp_backend_string(pp_backend_of(ctx)), ok ? "ok" : "WRONG");
  if (!ok) std::fprintf(stderr, "%s\n", pp_last_error(ctx));
  pp_destroy(ctx);
  return ok ? 0 : 1;
}
