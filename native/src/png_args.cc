// SPDX-License-Identifier: MIT
#include "png_args.h"

#include <string>

#include "napi_util.h"
#include "png_encode.h"

namespace cutout {

// encodePng(pixels: Uint8Array, width, height, channels, { level, threads, strategy? }) → Uint8Array
// The PNG lands in a fresh JS ArrayBuffer that the returned Uint8Array alone spans, so move() can
// transfer it (Node marks external ArrayBuffers untransferable: postMessage would copy them).
Napi::Value JsEncodePng(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  ByteSpan px = BytesOf(info[0], "pixels");
  const int w = IntArg(info[1], "width", 1, kPngMaxSide);
  const int h = IntArg(info[2], "height", 1, kPngMaxSide);
  const int c = IntArg(info[3], "channels", 1, 4);
  CUTOUT_THROW_TYPE_IF(!info[4].IsObject(), env, "ERR_CUTOUT_ARG", "Expected an object for options");
  Napi::Object o = info[4].As<Napi::Object>();
  PngOptions options;
  options.level = IntArg(o.Get("level"), "options.level", 0, 9);
  options.threads = IntArg(o.Get("threads"), "options.threads", 1, 64);
  Napi::Value strategy = o.Get("strategy");
  if (!strategy.IsUndefined()) {
    const std::string name = strategy.IsString() ? strategy.As<Napi::String>().Utf8Value() : "";
    CUTOUT_THROW_TYPE_IF(name != "default" && name != "rle" && name != "fast", env, "ERR_CUTOUT_ARG",
                         "Expected 'default', 'rle' or 'fast' for options.strategy");
    options.strategy = name == "rle" ? PngStrategy::kRle : name == "fast" ? PngStrategy::kFast : PngStrategy::kDefault;
  }
  const size_t expected = static_cast<size_t>(w) * h * c;
  CUTOUT_THROW_TYPE_IF(px.length != expected, env, "ERR_CUTOUT_BAD_LENGTH", "Expected ", expected, " bytes (", w, "x",
                       h, "x", c, ") for pixels but received ", px.length);
  try {
    const PngFile png = EncodePng(px.data, w, h, c, options);
    Napi::ArrayBuffer buffer = Napi::ArrayBuffer::New(env, png.size());
    png.WriteTo(static_cast<uint8_t*>(buffer.Data()));
    return Napi::Uint8Array::New(env, png.size(), buffer, 0);
  } catch (const Napi::Error&) {
    throw;
  } catch (const std::exception& e) {
    throw CodedError(env, "ERR_CUTOUT_PNG_ENCODE", Concat("PNG encoding failed: ", e.what()));
  }
}

}  // namespace cutout
