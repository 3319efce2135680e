/*
 * ladder/sort_check.cuh — `parprim ladder sort --check`'s second half: the production sort
 * and merge over every dtype, order and value size, on adversarial keys, against the CPU
 * reference. Included once, by ladder/sort.cu, inside its anonymous namespace.
 */
/* ------------------------------------------------------------------------------------ */
/* --check: the production sort and merge over every dtype, order and value size        */
/* ------------------------------------------------------------------------------------ */

// Keys that exercise API.md's rules: random bits (NaNs with payloads, infinities,
// denormals, both zeros for floats), a mix of the special values, and few distinct keys
// (long runs of ties: stability).
template <class U> std::vector<U> semantic_keys(size_t n, int kind, uint64_t seed) {
  std::vector<U> k(n);
  uint64_t s = seed;
  for (size_t i = 0; i < n; i++) {
    uint64_t r = splitmix64(s);
    if (kind == 1) {
      static const uint64_t f32[] = {0, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00001u,
                                     0x3f800000u, 0xbf800000u, 1, 0x80000001u, 0x7fffffffu, 0x80000000u};
      static const uint64_t f64[] = {0, 0x8000000000000000ull, 0x7ff0000000000000ull, 0xfff0000000000000ull,
                                     0x7ff8000000000000ull, 0xfff8000000000123ull, 0x3ff0000000000000ull,
                                     0xbff0000000000000ull, 1, 0x8000000000000001ull, 0x7fffffffffffffffull,
                                     0x8000000000000000ull};
      r = sizeof(U) == 8 ? f64[r % 12] : f32[r % 12];
    } else if (kind == 2) {
      r = (r % 5) * 0x0101010101010101ull;
    }
    k[i] = (U)r;
  }
  return k;
}

template <class U>
std::string check_sort_case(Session &ss, pp_dtype t, size_t n, int kind, pp_order order, size_t vs, uint64_t seed) {
  std::vector<U> keys = semantic_keys<U>(n, kind, seed);
  std::vector<uint64_t> perm(n);
  for (size_t i = 0; i < n; i++) perm[i] = i;
  std::vector<U> want = keys;
  cpu_radix_sort(want, &perm, t, order);
  // stability and the float rules are also checked independently of the radix reference
  for (size_t i = 1; i < n; i++) {
    const U a = image_of(want[i - 1], t, order), b = image_of(want[i], t, order);
    if (a > b || (a == b && perm[i - 1] > perm[i])) return "reference sort is wrong";
  }
  // one element of slack on each side: the sort must not touch it
  DeviceBuffer dk((n + 2) * sizeof(U)), dv((n + 2) * 8);
  std::vector<U> hk(n + 2, (U)0x5a5a5a5a5a5a5a5aull);
  std::copy(keys.begin(), keys.end(), hk.begin() + 1);
  LADDER_CUDA_CHECK(cudaMemcpy(dk.p, hk.data(), (n + 2) * sizeof(U), cudaMemcpyHostToDevice));
  std::vector<unsigned char> hv((n + 2) * 8, 0x5a);
  for (size_t i = 0; vs && i < n; i++) {
    const uint64_t v = i | (i << 40);
    memcpy(&hv[(i + 1) * vs], &v, vs);
  }
  if (vs) LADDER_CUDA_CHECK(cudaMemcpy(dv.p, hv.data(), (n + 2) * vs, cudaMemcpyHostToDevice));
  pp_sort_opts o = {order, PP_SORT_RADIX};
  const pp_status st = pp_sort(ss.ctx, t, dk.as<U>() + 1, vs ? (void *)(dv.as<unsigned char>() + vs) : nullptr, vs, n, &o);
  if (st != PP_OK) return std::string("pp_sort: ") + pp_status_string(st) + ": " + pp_last_error(ss.ctx);
  LADDER_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<U> gk = download<U>(dk.p, n + 2);
  if (memcmp(&gk[0], &hk[0], sizeof(U)) || memcmp(&gk[n + 1], &hk[n + 1], sizeof(U))) return "wrote outside the keys";
  std::vector<U> got(gk.begin() + 1, gk.begin() + 1 + n);
  std::string e = compare(got, want, "keys");
  if (!e.empty() || !vs) return e;
  std::vector<unsigned char> gv = download<unsigned char>(dv.p, (n + 2) * vs);
  if (memcmp(&gv[0], &hv[0], vs) || memcmp(&gv[(n + 1) * vs], &hv[(n + 1) * vs], vs)) return "wrote outside the values";
  for (size_t i = 0; i < n; i++) {
    uint64_t v = 0, w = perm[i] | (perm[i] << 40);
    memcpy(&v, &gv[(i + 1) * vs], vs);
    if (vs == 4) w &= 0xffffffffu;
    if (v != w) {
      char b[128];
      snprintf(b, sizeof b, "values differ first at %zu of %zu (stability)", i, n);
      return b;
    }
  }
  return "";
}

template <class U>
std::string check_merge_case(Session &ss, pp_dtype t, size_t na, size_t nb, int kind, pp_order order, uint64_t seed) {
  std::vector<U> a = semantic_keys<U>(na, kind, seed), b = semantic_keys<U>(nb, kind, seed + 1);
  cpu_radix_sort(a, nullptr, t, order);
  cpu_radix_sort(b, nullptr, t, order);
  std::vector<U> want(na + nb);
  size_t i = 0, j = 0, k = 0;
  while (i < na || j < nb)
    want[k++] = (j >= nb || (i < na && image_of(a[i], t, order) <= image_of(b[j], t, order))) ? a[i++] : b[j++];
  DeviceBuffer da(na * sizeof(U) + 1), db(nb * sizeof(U) + 1), dout((na + nb) * sizeof(U) + 1);
  if (na) LADDER_CUDA_CHECK(cudaMemcpy(da.p, a.data(), na * sizeof(U), cudaMemcpyHostToDevice));
  if (nb) LADDER_CUDA_CHECK(cudaMemcpy(db.p, b.data(), nb * sizeof(U), cudaMemcpyHostToDevice));
  const pp_status st = pp_merge(ss.ctx, t, da.p, na, db.p, nb, dout.p, order);
  if (st != PP_OK) return std::string("pp_merge: ") + pp_status_string(st) + ": " + pp_last_error(ss.ctx);
  LADDER_CUDA_CHECK(cudaDeviceSynchronize());
  return compare(download<U>(dout.p, na + nb), want, "merged keys");
}

int run_semantics(Session &ss, const Options &o, int &cases) {
  if (!ss.ctx) return 0;
  const pp_dtype types[] = {PP_U8, PP_I32, PP_U32, PP_I64, PP_U64, PP_F32, PP_F64};
  std::vector<size_t> sizes = {0, 1, 2, 33, 4096, 4097, 6913, 100003, ((size_t)1 << 20) + 7};
  if (o.n_given) sizes = {o.n};
  int failures = 0;
  uint64_t seed = 1;
  for (pp_dtype t : types)
    for (size_t n : sizes)
      for (int kind = 0; kind < 3; kind++)
        for (int ord = 0; ord < 2; ord++)
          for (size_t vs : {(size_t)0, (size_t)4, (size_t)8}) {
            if (n > 100003 && (kind != 0 || vs == 8)) continue; /* keep the sweep short */
            const pp_order order = (pp_order)ord;
            std::string e = pp_dtype_size(t) == 1   ? check_sort_case<uint8_t>(ss, t, n, kind, order, vs, seed++)
                            : pp_dtype_size(t) == 4 ? check_sort_case<uint32_t>(ss, t, n, kind, order, vs, seed++)
                                                    : check_sort_case<uint64_t>(ss, t, n, kind, order, vs, seed++);
            cases++;
            if (!e.empty()) {
              failures++;
              printf("FAIL pp_sort dtype=%d n=%zu keys=%d order=%d value_size=%zu: %s\n", (int)t, n, kind, ord, vs,
                     e.c_str());
            }
          }
  const size_t msizes[][2] = {{0, 1}, {1, 0}, {1, 1}, {7, 3000}, {3000, 7}, {3840, 3840}, {100003, 65536}};
  for (pp_dtype t : types)
    for (auto &m : msizes)
      for (int kind = 0; kind < 3; kind++)
        for (int ord = 0; ord < 2; ord++) {
          const pp_order order = (pp_order)ord;
          std::string e = pp_dtype_size(t) == 1   ? check_merge_case<uint8_t>(ss, t, m[0], m[1], kind, order, seed++)
                          : pp_dtype_size(t) == 4 ? check_merge_case<uint32_t>(ss, t, m[0], m[1], kind, order, seed++)
                                                  : check_merge_case<uint64_t>(ss, t, m[0], m[1], kind, order, seed++);
          cases++;
          if (!e.empty()) {
            failures++;
            printf("FAIL pp_merge dtype=%d na=%zu nb=%zu keys=%d order=%d: %s\n", (int)t, m[0], m[1], kind, ord,
                   e.c_str());
          }
        }
  return failures;
}
