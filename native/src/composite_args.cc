// SPDX-License-Identifier: MIT
#include "composite_args.h"

#include <functional>
#include <string>

#include "napi_util.h"

namespace cutout {

namespace {

// A finite number in [lo, hi] under `key` of `o` into *dst; absent leaves *dst as it is.
template <typename T>
void TuningNumber(const Napi::Object& o, const char* group, const char* key, double lo, double hi, T* dst) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined()) return;
  const double d = v.IsNumber() ? v.As<Napi::Number>().DoubleValue() : lo - 1;
  CUTOUT_THROW_TYPE_IF(!(d >= lo && d <= hi), o.Env(), "ERR_CUTOUT_ARG", "Expected a number between ", lo, " and ", hi,
                       " for tuning.", group, ".", key, " but received ",
                       v.IsNumber() ? Concat(d) : std::string(TypeName(v)));
  *dst = static_cast<T>(d);
}

// The stages' constants, for benchmarks that tune or cross-validate them (bench/quality-cv.ts):
// { refine?: {...}, matting?: {...}, foreground?: {...} }, names as in RefineParams, MattingParams and
// ForegroundParams (camelCase). Absent fields keep the defaults.
void TuningArg(const Napi::Value& tuning, CompositeParams& p) {
  if (tuning.IsUndefined()) return;
  Napi::Env env = tuning.Env();
  CUTOUT_THROW_TYPE_IF(!tuning.IsObject(), env, "ERR_CUTOUT_ARG", "Expected an object for tuning");
  Napi::Object t = tuning.As<Napi::Object>();
  auto group = [&](const char* name) -> Napi::Object {
    Napi::Value g = t.Get(name);
    if (g.IsUndefined()) return Napi::Object::New(env);
    CUTOUT_THROW_TYPE_IF(!g.IsObject(), env, "ERR_CUTOUT_ARG", "Expected an object for tuning.", name);
    return g.As<Napi::Object>();
  };
  Napi::Object r = group("refine");
  RefineParams& rp = p.refine_params;
  TuningNumber(r, "refine", "radius", 1, 64, &rp.radius);
  TuningNumber(r, "refine", "eps", 1e-6, 1, &rp.eps);
  TuningNumber(r, "refine", "bandLo", 0, 1, &rp.band_lo);
  TuningNumber(r, "refine", "bandHi", 0, 1, &rp.band_hi);
  TuningNumber(r, "refine", "bandDilate", 0, 64, &rp.band_dilate);
  Napi::Object m = group("matting");
  MattingParams& mp = p.matting_params;
  TuningNumber(m, "matting", "sureBg", 0, 1, &mp.sure_bg);
  TuningNumber(m, "matting", "sureFg", 0, 1, &mp.sure_fg);
  TuningNumber(m, "matting", "bandDilate", 0, 64, &mp.band_dilate);
  TuningNumber(m, "matting", "sigma", 0.5, 64, &mp.sigma);
  TuningNumber(m, "matting", "minSupport", 0, 1, &mp.min_support);
  TuningNumber(m, "matting", "confidenceMin", 0, 2, &mp.confidence_min);
  TuningNumber(m, "matting", "confidenceRange", 1e-6, 2, &mp.confidence_range);
  Napi::Object f = group("foreground");
  ForegroundParams& fp = p.foreground_params;
  TuningNumber(f, "foreground", "regularization", 1e-8, 1, &fp.regularization);
  TuningNumber(f, "foreground", "gradientWeight", 0, 100, &fp.gradient_weight);
  TuningNumber(f, "foreground", "smallIterations", 0, 100, &fp.small_iterations);
  TuningNumber(f, "foreground", "bigIterations", 0, 100, &fp.big_iterations);
  TuningNumber(f, "foreground", "smallSize", 1, 4096, &fp.small_size);
  TuningNumber(f, "foreground", "maxWorkingPixels", 64, 1 << 26, &fp.max_working_pixels);
}
}  // namespace

CompositeParams CompositeOptionsArg(const Napi::Value& options, int w, int h) {
  CompositeParams p;
  if (!options.IsObject()) return p;
  Napi::Env env = options.Env();
  Napi::Object o = options.As<Napi::Object>();
  // The three switches, strict (napi_util.h): refine and decontaminate are required, matting absent means on.
  p.refine = RequiredBool(o, "refine");
  p.matting = OptionalBool(o, "matting", p.matting);
  p.decontaminate = RequiredBool(o, "decontaminate");
  // Absent means 1 (the caller's thread only); the bytes are the same for any count.
  Napi::Value threads = o.Get("threads");
  if (!threads.IsUndefined()) p.threads = IntArg(threads, "threads", 1, 64);
  // Tuning knobs for benchmarks; the defaults live in RefineParams.
  if (o.Get("refineRadius").IsNumber()) p.refine_params.radius = IntArg(o.Get("refineRadius"), "refineRadius", 1, 64);
  if (o.Get("refineEps").IsNumber()) {
    const float eps = o.Get("refineEps").As<Napi::Number>().FloatValue();
    CUTOUT_THROW_TYPE_IF(!(eps > 0 && eps < 1), env, "ERR_CUTOUT_ARG", "Expected a number in (0, 1) for refineEps");
    p.refine_params.eps = eps;
  }
  TuningArg(o.Get("tuning"), p);
  // Benchmarks: the stages' wall times come back on the result (RunComposite).
  p.want_timings = OptionalBool(o, "timings", false);
  Napi::Value roi = o.Get("roi");
  if (roi.IsArray()) {
    Napi::Array a = roi.As<Napi::Array>();
    CUTOUT_THROW_TYPE_IF(a.Length() != 4, env, "ERR_CUTOUT_ARG", "Expected 4 numbers for roi");
    p.roi_x1 = IntArg(a.Get(0u), "roi[0]", 0, w);
    p.roi_y1 = IntArg(a.Get(1u), "roi[1]", 0, h);
    p.roi_x2 = IntArg(a.Get(2u), "roi[2]", 0, w);
    p.roi_y2 = IntArg(a.Get(3u), "roi[3]", 0, h);
  }
  return p;
}

Napi::Object RunComposite(Napi::Env env, uint8_t* rgba, int w, int h, const float* mask, int mw, int mh,
                          const CompositeParams& p) {
  // rgba is written while the mask is read (by several threads): they must not share bytes.
  const uint8_t* r0 = rgba;
  const uint8_t* r1 = r0 + static_cast<size_t>(w) * h * 4;
  const uint8_t* m0 = reinterpret_cast<const uint8_t*>(mask);
  const uint8_t* m1 = m0 + static_cast<size_t>(mw) * mh * sizeof(float);
  const std::less<const uint8_t*> before;
  CUTOUT_THROW_TYPE_IF(before(m0, r1) && before(r0, m1), env, "ERR_CUTOUT_ARG",
                       "Expected rgba and mask in separate memory but they overlap");
  Box box;
  CompositeTimings times;
  CompositeParams params = p;
  if (p.want_timings) params.timings = &times;
  try {
    box = CompositeAlpha(rgba, w, h, mask, mw, mh, params);
  } catch (const std::exception& e) {  // refinement scratch allocations can throw bad_alloc
    throw CodedError(env, "ERR_CUTOUT_COMPOSITE", Concat("Compositing failed: ", e.what()));
  }
  Napi::Object out = Napi::Object::New(env);
  out.Set("top", box.top);
  out.Set("left", box.left);
  out.Set("width", box.width);
  out.Set("height", box.height);
  if (p.want_timings) {
    Napi::Object t = Napi::Object::New(env);
    t.Set("upsample", times.upsample);
    t.Set("refine", times.refine);
    t.Set("matting", times.matting);
    t.Set("roi", times.roi);
    t.Set("foreground", times.foreground);
    t.Set("box", times.box);
    out.Set("timings", t);
  }
  return out;
}

// compositeMask(rgba, width, height, mask, maskWidth, maskHeight, options): what session.composite
// does, with a mask from elsewhere (a GPU pipeline's other thread). The options are read before the
// buffers, so a getter that detaches one is caught by the checks below.
Napi::Value JsCompositeMask(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const int w = IntArg(info[1], "width", 1, 1 << 16);
  const int h = IntArg(info[2], "height", 1, 1 << 16);
  const int mw = IntArg(info[4], "maskWidth", 1, 1 << 16);
  const int mh = IntArg(info[5], "maskHeight", 1, 1 << 16);
  const CompositeParams p = CompositeOptionsArg(info[6], w, h);
  ByteSpan rgba = BytesOf(info[0], "rgba");
  const size_t expected = static_cast<size_t>(w) * h * 4;
  CUTOUT_THROW_TYPE_IF(rgba.length != expected, env, "ERR_CUTOUT_BAD_LENGTH", "Expected ", expected, " bytes (", w, "x",
                       h, "x4) for rgba but received ", rgba.length);
  CUTOUT_THROW_TYPE_IF(!info[3].IsTypedArray() || info[3].As<Napi::TypedArray>().TypedArrayType() != napi_float32_array,
                       env, "ERR_CUTOUT_ARG", "Expected a Float32Array for mask but received ",
                       info[3].IsUndefined() ? "undefined" : TypeName(info[3]));
  Napi::Float32Array mask = info[3].As<Napi::Float32Array>();
  CUTOUT_THROW_IF(mask.ArrayBuffer().IsDetached(), env, "ERR_CUTOUT_DETACHED", "The buffer for mask is detached");
  const size_t floats = static_cast<size_t>(mw) * mh;
  CUTOUT_THROW_TYPE_IF(mask.ElementLength() != floats, env, "ERR_CUTOUT_BAD_LENGTH", "Expected ", floats, " floats (",
                       mw, "x", mh, ") for mask but received ", mask.ElementLength());
  return RunComposite(env, rgba.data, w, h, mask.Data(), mw, mh, p);
}

}  // namespace cutout
