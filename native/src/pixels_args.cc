// SPDX-License-Identifier: MIT
#include "pixels_args.h"

#include "composite.h"
#include "napi_util.h"
#include "preprocess.h"
#include "refine.h"
#include "resize.h"

namespace cutout {
namespace {

// An interleaved 8-bit image argument: bytes, width, height, channels (3 or 4) at info[at..at+3].
struct PixelsArg {
  ByteSpan bytes;
  int width, height, channels;
};

PixelsArg PixelsAt(const Napi::CallbackInfo& info, int at, const char* name) {
  return {BytesOf(info[at], name), IntArg(info[at + 1], "width", 1, 1 << 16),
          IntArg(info[at + 2], "height", 1, 1 << 16), IntArg(info[at + 3], "channels", 3, 4)};
}

}  // namespace

// preprocess(src: Uint8Array, width, height, channels, dst: Float32Array, mean[3], std[3])
Napi::Value JsPreprocess(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const auto [src, w, h, c] = PixelsAt(info, 0, "src");
  CUTOUT_THROW_TYPE_IF(!info[4].IsTypedArray() || info[4].As<Napi::TypedArray>().TypedArrayType() != napi_float32_array,
                       env, "ERR_CUTOUT_ARG", "Expected a Float32Array for dst");
  Napi::Float32Array dst = info[4].As<Napi::Float32Array>();
  const size_t plane = static_cast<size_t>(w) * h;
  CUTOUT_THROW_TYPE_IF(src.length != plane * c, env, "ERR_CUTOUT_BAD_LENGTH", "Expected ", plane * c,
                       " bytes for src but received ", src.length);
  CUTOUT_THROW_TYPE_IF(dst.ElementLength() != plane * 3, env, "ERR_CUTOUT_BAD_LENGTH", "Expected ", plane * 3,
                       " floats for dst but received ", dst.ElementLength());
  Normalisation norm{};
  for (int k = 0; k < 2; k++) {
    Napi::Value v = info[5 + k];
    CUTOUT_THROW_TYPE_IF(!v.IsArray() || v.As<Napi::Array>().Length() != 3, env, "ERR_CUTOUT_ARG",
                         "Expected an array of 3 numbers for ", k == 0 ? "mean" : "std");
    for (uint32_t i = 0; i < 3; i++) {
      const float f = v.As<Napi::Array>().Get(i).ToNumber().FloatValue();
      (k == 0 ? norm.mean : norm.std)[i] = f;
    }
  }
  PreprocessToNchw(src.data, w, h, c, norm, dst.Data());
  return env.Undefined();
}

// resizeToRgb(src: Uint8Array, width, height, channels, dst: Uint8Array, dstWidth, dstHeight, threads?)
Napi::Value JsResizeToRgb(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const auto [src, w, h, c] = PixelsAt(info, 0, "src");
  ByteSpan dst = BytesOf(info[4], "dst");
  const int dw = IntArg(info[5], "dstWidth", 1, 1 << 16);
  const int dh = IntArg(info[6], "dstHeight", 1, 1 << 16);
  const int threads = info[7].IsUndefined() ? 1 : IntArg(info[7], "threads", 1, 64);
  CUTOUT_THROW_TYPE_IF(src.length != static_cast<size_t>(w) * h * c, env, "ERR_CUTOUT_BAD_LENGTH", "Expected ",
                       static_cast<size_t>(w) * h * c, " bytes for src but received ", src.length);
  CUTOUT_THROW_TYPE_IF(dst.length != static_cast<size_t>(dw) * dh * 3, env, "ERR_CUTOUT_BAD_LENGTH", "Expected ",
                       static_cast<size_t>(dw) * dh * 3, " bytes for dst but received ", dst.length);
  CUTOUT_THROW_TYPE_IF(src.data < dst.data + dst.length && dst.data < src.data + src.length, env, "ERR_CUTOUT_ARG",
                       "src and dst must not share memory");
  ResizeToRgb(src.data, w, h, c, dst.data, dw, dh, threads);
  return env.Undefined();
}

// upsampleMask(mask: Float32Array, mw, mh, dst: Uint8Array, width, height, step)
Napi::Value JsUpsampleMask(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  CUTOUT_THROW_TYPE_IF(!info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_float32_array,
                       env, "ERR_CUTOUT_ARG", "Expected a Float32Array for mask");
  Napi::Float32Array mask = info[0].As<Napi::Float32Array>();
  const int mw = IntArg(info[1], "maskWidth", 1, 1 << 16);
  const int mh = IntArg(info[2], "maskHeight", 1, 1 << 16);
  ByteSpan dst = BytesOf(info[3], "dst");
  const int w = IntArg(info[4], "width", 1, 1 << 16);
  const int h = IntArg(info[5], "height", 1, 1 << 16);
  const int step = IntArg(info[6], "step", 1, 4);
  CUTOUT_THROW_TYPE_IF(mask.ElementLength() != static_cast<size_t>(mw) * mh, env, "ERR_CUTOUT_BAD_LENGTH", "Expected ",
                       static_cast<size_t>(mw) * mh, " floats for mask but received ", mask.ElementLength());
  CUTOUT_THROW_TYPE_IF(dst.length != static_cast<size_t>(w) * h * step, env, "ERR_CUTOUT_BAD_LENGTH", "Expected ",
                       static_cast<size_t>(w) * h * step, " bytes for dst but received ", dst.length);
  UpsampleMatteBilinear(mask.Data(), mw, mh, dst.data + (step - 1), w, h, step, static_cast<size_t>(w) * step);
  return env.Undefined();
}

// flattenOnColor(rgba: Uint8Array, r, g, b, a)
Napi::Value JsFlattenOnColor(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  ByteSpan rgba = BytesOf(info[0], "rgba");
  CUTOUT_THROW_TYPE_IF(rgba.length % 4 != 0, env, "ERR_CUTOUT_BAD_LENGTH", "Expected a multiple of 4 bytes for rgba");
  FlattenOnColor(rgba.data, rgba.length / 4, IntArg(info[1], "r", 0, 255), IntArg(info[2], "g", 0, 255),
                 IntArg(info[3], "b", 0, 255), IntArg(info[4], "a", 0, 255));
  return env.Undefined();
}

// blendOver(rgba: Uint8Array, background: Uint8Array) — same size, both RGBA.
Napi::Value JsBlendOver(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  ByteSpan rgba = BytesOf(info[0], "rgba");
  ByteSpan bg = BytesOf(info[1], "background");
  CUTOUT_THROW_TYPE_IF(rgba.length % 4 != 0 || bg.length != rgba.length, env, "ERR_CUTOUT_BAD_LENGTH",
                       "Expected rgba and background of the same length (a multiple of 4) but received ", rgba.length,
                       " and ", bg.length);
  BlendOver(rgba.data, bg.data, rgba.length / 4);
  return env.Undefined();
}

// extractAlpha(rgba: Uint8Array, dst: Uint8Array)
Napi::Value JsExtractAlpha(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  ByteSpan rgba = BytesOf(info[0], "rgba");
  ByteSpan dst = BytesOf(info[1], "dst");
  CUTOUT_THROW_TYPE_IF(rgba.length % 4 != 0 || dst.length * 4 != rgba.length, env, "ERR_CUTOUT_BAD_LENGTH",
                       "Expected dst of ", rgba.length / 4, " bytes but received ", dst.length);
  ExtractAlpha(rgba.data, rgba.length / 4, dst.data);
  return env.Undefined();
}

}  // namespace cutout
