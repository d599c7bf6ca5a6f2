// SPDX-License-Identifier: MIT
#include "libvips_decode.h"

#include <algorithm>
#include <cstring>
#include <mutex>

#if defined(__linux__)
#include <dlfcn.h>
#include <link.h>
#endif

namespace cutout {
namespace {

// libvips' C API, as much as this file uses (vips/image.h, vips/foreign.h, vips/conversion.h of
// libvips 8.x; stable across 8.x). VipsImage is opaque here.
struct VipsImage;
struct VipsRegion;
struct VipsRect {
  int left, top, width, height;
};
enum : int { kVipsFormatUchar = 0, kVipsAccessSequential = 1, kVipsFailOnTruncated = 1, kVipsFailOnWarning = 3 };

struct VipsApi {
  const char* (*find_load_buffer)(const void* data, size_t size) = nullptr;
  VipsImage* (*new_from_buffer)(const void* buf, size_t len, const char* option_string, ...) = nullptr;
  int (*bandjoin_const1)(VipsImage* in, VipsImage** out, double c, ...) = nullptr;
  VipsImage* (*new_from_memory)(const void* data, size_t size, int width, int height, int bands, int format) = nullptr;
  int (*image_write)(VipsImage* image, VipsImage* out) = nullptr;
  VipsRegion* (*region_new)(VipsImage* image) = nullptr;
  int (*region_image)(VipsRegion* reg, const VipsRect* r) = nullptr;
  int (*region_prepare_to)(VipsRegion* reg, VipsRegion* dest, const VipsRect* r, int x, int y) = nullptr;
  int (*get_width)(const VipsImage* image) = nullptr;
  int (*get_height)(const VipsImage* image) = nullptr;
  int (*get_bands)(const VipsImage* image) = nullptr;
  int (*get_format)(const VipsImage* image) = nullptr;
  unsigned long (*get_typeof)(const VipsImage* image, const char* name) = nullptr;
  int (*get_int)(const VipsImage* image, const char* name, int* out) = nullptr;
  int (*get_string)(const VipsImage* image, const char* name, const char** out) = nullptr;
  int (*get_interpretation)(const VipsImage* image) = nullptr;
  int (*hasalpha)(VipsImage* image) = nullptr;
  const char* (*error_buffer)() = nullptr;
  void (*error_clear)() = nullptr;
  void (*object_unref)(void* object) = nullptr;
  bool ok = false;
};

#if defined(__linux__)
// The path of the loaded object whose name holds "libvips" (sharp's libvips-cpp.so.*), if any.
int FindLibvips(struct dl_phdr_info* info, size_t, void* data) {
  if (info->dlpi_name && std::strstr(info->dlpi_name, "/libvips")) {
    *static_cast<std::string*>(data) = info->dlpi_name;
    return 1;
  }
  return 0;
}

template <typename F>
bool Resolve(void* lib, const char* name, F* fn) {
  *fn = reinterpret_cast<F>(dlsym(lib, name));
  return *fn != nullptr;
}

VipsApi LoadApi() {
  VipsApi api;
  std::string path;
  dl_iterate_phdr(FindLibvips, &path);
  if (path.empty()) return api;
  // RTLD_NOLOAD: only a library sharp already loaded (and initialised with vips_init).
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (!lib) return api;
  api.ok =
      Resolve(lib, "vips_foreign_find_load_buffer", &api.find_load_buffer) &&
      Resolve(lib, "vips_image_new_from_buffer", &api.new_from_buffer) &&
      Resolve(lib, "vips_bandjoin_const1", &api.bandjoin_const1) &&
      Resolve(lib, "vips_image_new_from_memory", &api.new_from_memory) &&
      Resolve(lib, "vips_image_write", &api.image_write) && Resolve(lib, "vips_region_new", &api.region_new) &&
      Resolve(lib, "vips_region_image", &api.region_image) &&
      Resolve(lib, "vips_region_prepare_to", &api.region_prepare_to) &&
      Resolve(lib, "vips_image_get_width", &api.get_width) && Resolve(lib, "vips_image_get_height", &api.get_height) &&
      Resolve(lib, "vips_image_get_bands", &api.get_bands) && Resolve(lib, "vips_image_get_format", &api.get_format) &&
      Resolve(lib, "vips_image_get_typeof", &api.get_typeof) && Resolve(lib, "vips_image_get_int", &api.get_int) &&
      Resolve(lib, "vips_image_get_string", &api.get_string) &&
      Resolve(lib, "vips_image_get_interpretation", &api.get_interpretation) &&
      Resolve(lib, "vips_image_hasalpha", &api.hasalpha) && Resolve(lib, "vips_error_buffer", &api.error_buffer) &&
      Resolve(lib, "vips_error_clear", &api.error_clear) && Resolve(lib, "g_object_unref", &api.object_unref);
  // The handle stays open: sharp's addon keeps the library loaded for the life of the process anyway.
  return api;
}
#else
VipsApi LoadApi() { return VipsApi{}; }
#endif

// Resolved once libvips is there; a miss (sharp not loaded yet) is tried again on the next call.
const VipsApi& Api() {
  static std::mutex mu;
  static VipsApi api;
  std::lock_guard<std::mutex> lock(mu);
  if (!api.ok) api = LoadApi();
  return api;
}

// The format the service names a libvips buffer loader by ("jpeg", "png", "webp"); null for a loader
// of any other format, which the service does not take.
const char* FormatOfLoader(const char* loader) {
  if (std::strcmp(loader, "VipsForeignLoadJpegBuffer") == 0) return "jpeg";
  if (std::strcmp(loader, "VipsForeignLoadPngBuffer") == 0) return "png";
  if (std::strcmp(loader, "VipsForeignLoadWebpBuffer") == 0) return "webp";
  return nullptr;
}

// Drops a reference (an image's, a region's) on scope exit.
template <typename T>
struct Ref {
  const VipsApi& api;
  T* object = nullptr;
  ~Ref() {
    if (object) api.object_unref(object);
  }
};
using Unref = Ref<VipsImage>;

// Photos up to this many pixels are decoded on the calling thread, a strip of rows at a time, each
// strip written straight into the caller's rows. vips_image_write hands every strip to a thread of
// libvips' pool and waits for it: between photos that pool has gone to sleep, and waking it costs
// more than it saves on a small photo (bench:photo-stages at one thread, nuthatch 1 MP: decode stage
// 9.1-9.5 -> 8.3-8.4 ms, the process's CPU time the same). From 4 MP up the pool was faster (it
// overlaps the decode with the band join and the writes; docs/native.md).
constexpr int64_t kCallingThreadMaxPixels = 2'500'000;
constexpr int kStripRows = 32;  // a multiple of a JPEG's MCU rows (8 or 16); 64-row strips were slower

// The pixels of `image` into `out` (an image over the caller's memory), strip by strip, top to bottom
// (what a sequential load allows), on this thread.
bool WriteOnThisThread(const VipsApi& api, VipsImage* image, VipsImage* out, int width, int height) {
  Ref<VipsRegion> from{api, api.region_new(image)};
  Ref<VipsRegion> to{api, api.region_new(out)};
  if (!from.object || !to.object) return false;
  for (int top = 0; top < height; top += kStripRows) {
    const VipsRect r{0, top, width, std::min(kStripRows, height - top)};
    if (api.region_image(to.object, &r) != 0 || api.region_prepare_to(from.object, to.object, &r, 0, top) != 0)
      return false;
  }
  return true;
}

}  // namespace

bool LibvipsAvailable() { return Api().ok; }

bool ProbeHeader(const uint8_t* input, size_t input_len, HeaderFacts* facts) {
  const VipsApi& api = Api();
  if (!api.ok || !input || input_len == 0 || !facts) return false;
  const char* loader = api.find_load_buffer(input, input_len);
  if (!loader) {
    api.error_clear();
    return false;
  }
  facts->format = FormatOfLoader(loader);
  if (!facts->format) return false;
  // The header only: a sequential load reads no pixels until they are asked for. sharp's metadata()
  // options (its default failOn, 'warning'), so a header sharp refused is refused here too.
  Unref image{api, api.new_from_buffer(input, input_len, "", "access", kVipsAccessSequential, "fail_on",
                                       kVipsFailOnWarning, nullptr)};
  if (!image.object) {
    api.error_clear();
    return false;
  }
  VipsImage* in = image.object;
  facts->width = api.get_width(in);
  facts->height = api.get_height(in);
  facts->bands = api.get_bands(in);
  facts->band_format = api.get_format(in);
  facts->interpretation = api.get_interpretation(in);
  facts->has_alpha = api.hasalpha(in) != 0;
  facts->has_profile = api.get_typeof(in, "icc-profile-data") != 0;
  int v = 0;
  facts->orientation = api.get_typeof(in, "orientation") != 0 && api.get_int(in, "orientation", &v) == 0 ? v : 0;
  facts->interlaced = api.get_typeof(in, "interlaced") != 0 && api.get_int(in, "interlaced", &v) == 0 && v == 1;
  const char* chroma = nullptr;
  facts->chroma_subsampling.clear();
  if (api.get_typeof(in, "jpeg-chroma-subsample") != 0 && api.get_string(in, "jpeg-chroma-subsample", &chroma) == 0 &&
      chroma)
    facts->chroma_subsampling = chroma;
  return true;
}

VipsDecodeStatus DecodePlainRgba(const uint8_t* input, size_t input_len, int width, int height, uint8_t* dst,
                                 size_t dst_len, std::string* error) {
  const VipsApi& api = Api();
  if (!api.ok) return VipsDecodeStatus::kUnavailable;
  if (!dst || width <= 0 || height <= 0 || dst_len != static_cast<size_t>(width) * height * 4)
    return VipsDecodeStatus::kNotPlain;
  if (!input || input_len == 0) {
    if (error) *error = "no bytes to decode";
    return VipsDecodeStatus::kFailed;
  }
  auto failed = [&]() {
    if (error) *error = api.error_buffer();
    api.error_clear();
    return VipsDecodeStatus::kFailed;
  };
  // The loader libvips picks for the bytes (as sharp's does), with sharp's options; only the formats
  // the service takes.
  const char* loader = api.find_load_buffer(input, input_len);
  if (!loader) return failed();
  if (!FormatOfLoader(loader)) return VipsDecodeStatus::kNotPlain;
  Unref loaded{api, api.new_from_buffer(input, input_len, "", "access", kVipsAccessSequential, "fail_on",
                                        kVipsFailOnTruncated, nullptr)};
  if (!loaded.object) return failed();
  VipsImage* in = loaded.object;
  int orientation = 1;
  if (api.get_typeof(in, "orientation") != 0 && api.get_int(in, "orientation", &orientation) != 0) orientation = 1;
  if (api.get_width(in) != width || api.get_height(in) != height || api.get_bands(in) != 3 ||
      api.get_format(in) != kVipsFormatUchar || api.get_typeof(in, "icc-profile-data") != 0 || orientation != 1)
    return VipsDecodeStatus::kNotPlain;
  Unref rgba{api};
  if (api.bandjoin_const1(in, &rgba.object, 255.0, nullptr) != 0) return failed();
  Unref out{api, api.new_from_memory(dst, dst_len, width, height, 4, kVipsFormatUchar)};
  if (!out.object) return failed();
  // The whole decode runs here, writing the caller's rows (vips_image_write_to_memory does the same
  // into a buffer of its own).
  const bool here = static_cast<int64_t>(width) * height <= kCallingThreadMaxPixels;
  if (here ? !WriteOnThisThread(api, rgba.object, out.object, width, height)
           : api.image_write(rgba.object, out.object) != 0)
    return failed();
  return VipsDecodeStatus::kOk;
}

}  // namespace cutout
