// SPDX-License-Identifier: MIT
#include "decode_args.h"

#include <string>

#include "libvips_decode.h"
#include "napi_util.h"
#include "png_decode.h"

namespace cutout {

namespace {

// The arguments every decode into the caller's memory takes: (input, width, height, dst), dst exactly
// width × height RGBA pixels and apart from input.
struct DecodeCall {
  ByteSpan input;
  int w, h;
  ByteSpan dst;
};

DecodeCall DecodeCallOf(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const ByteSpan input = BytesOf(info[0], "input");
  const int w = IntArg(info[1], "width", 1, 1 << 16);
  const int h = IntArg(info[2], "height", 1, 1 << 16);
  const ByteSpan dst = BytesOf(info[3], "dst");
  const size_t want = static_cast<size_t>(w) * h * 4;
  CUTOUT_THROW_TYPE_IF(dst.length != want, env, "ERR_CUTOUT_BAD_LENGTH", "Expected ", want,
                       " bytes for dst but received ", dst.length);
  CUTOUT_THROW_TYPE_IF(input.data < dst.data + dst.length && dst.data < input.data + input.length, env,
                       "ERR_CUTOUT_ARG", "input and dst must not share memory");
  return {input, w, h, dst};
}

}  // namespace

Napi::Value JsDecodePlainRgba(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const auto [input, w, h, dst] = DecodeCallOf(info);
  // A plain PNG that checks out whole decodes here; every other file (and any PNG this leaves) goes to libvips.
  if (IsPng(input.data, input.length) && DecodePlainPng(input.data, input.length, w, h, dst.data, dst.length))
    return Napi::Boolean::New(env, true);
  std::string error;
  switch (DecodePlainRgba(input.data, input.length, w, h, dst.data, dst.length, &error)) {
    case VipsDecodeStatus::kOk:
      return Napi::Boolean::New(env, true);
    case VipsDecodeStatus::kFailed:
      throw CodedError(env, "ERR_CUTOUT_DECODE",
                       error.empty() ? std::string("libvips could not decode the image") : error);
    default:
      return Napi::Boolean::New(env, false);
  }
}

Napi::Value JsDecodePlainPng(const Napi::CallbackInfo& info) {
  const auto [input, w, h, dst] = DecodeCallOf(info);
  return Napi::Boolean::New(info.Env(), DecodePlainPng(input.data, input.length, w, h, dst.data, dst.length));
}

Napi::Value JsProbeHeader(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const ByteSpan input = BytesOf(info[0], "input");
  HeaderFacts f;
  if (!ProbeHeader(input.data, input.length, &f)) return env.Null();
  Napi::Object o = Napi::Object::New(env);
  o.Set("format", f.format);
  o.Set("width", f.width);
  o.Set("height", f.height);
  o.Set("bands", f.bands);
  o.Set("bandFormat", f.band_format);
  o.Set("interpretation", f.interpretation);
  o.Set("hasAlpha", f.has_alpha);
  o.Set("hasProfile", f.has_profile);
  o.Set("orientation", f.orientation);
  o.Set("interlaced", f.interlaced);
  if (!f.chroma_subsampling.empty()) o.Set("chromaSubsampling", f.chroma_subsampling);
  return o;
}

Napi::Value JsLibvipsDecodeAvailable(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), LibvipsAvailable());
}

}  // namespace cutout
