// SPDX-License-Identifier: MIT
#include "shadow_args.h"

#include <string>

#include "napi_util.h"
#include "shadow.h"

namespace cutout {
namespace {

// { type, opacity }: the names remove.bg's shadow_type uses, and an integer percentage.
ShadowParams ShadowOptionsArg(const Napi::Value& options) {
  Napi::Env env = options.Env();
  CUTOUT_THROW_TYPE_IF(!options.IsObject(), env, "ERR_CUTOUT_ARG", "Expected an object for options but received ",
                       TypeName(options));
  Napi::Object o = options.As<Napi::Object>();
  Napi::Value type = o.Get("type");
  const std::string name = type.IsString() ? type.As<Napi::String>().Utf8Value() : std::string();
  ShadowParams p;
  if (name == "drop")
    p.kind = ShadowKind::kDrop;
  else if (name == "3D")
    p.kind = ShadowKind::kGround;
  else if (name == "car")
    p.kind = ShadowKind::kCar;
  else
    CUTOUT_THROW_TYPE_IF(true, env, "ERR_CUTOUT_ARG", "Expected 'drop', '3D' or 'car' for options.type but received ",
                         type.IsString() ? "'" + name + "'" : std::string(TypeName(type)));
  p.opacity = IntArg(o.Get("opacity"), "options.opacity", 0, 100);
  return p;
}

}  // namespace

Napi::Value JsDrawShadow(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const int w = IntArg(info[1], "width", 1, 1 << 16);
  const int h = IntArg(info[2], "height", 1, 1 << 16);
  // Options before the buffer, so that a getter that detaches it is caught by BytesOf.
  const ShadowParams p = ShadowOptionsArg(info[3]);
  ByteSpan rgba = BytesOf(info[0], "rgba");
  const size_t expected = static_cast<size_t>(w) * h * 4;
  CUTOUT_THROW_TYPE_IF(rgba.length != expected, env, "ERR_CUTOUT_BAD_LENGTH", "Expected ", expected, " bytes (", w, "x",
                       h, "x4) for rgba but received ", rgba.length);
  try {
    DrawShadow(rgba.data, w, h, p);
  } catch (const std::exception& e) {  // the grids' allocations can throw bad_alloc
    throw CodedError(env, "ERR_CUTOUT_SHADOW", Concat("Drawing the shadow failed: ", e.what()));
  }
  return env.Undefined();
}

}  // namespace cutout
