// SPDX-License-Identifier: MIT
#include "session_args.h"

#include <stdexcept>
#include <string>

#include "cuda_provider.h"
#include "napi_util.h"

namespace cutout {

ModelSettings ModelSettingsFrom(const Napi::Object& o) {
  Napi::Env env = o.Env();
  ModelSettings settings;
  settings.threads = IntArg(o.Get("threads"), "options.threads", 1, 256);
  settings.memory_pattern = OptionalBool(o, "memoryPattern", false);
  Napi::Value device = o.Get("device");
  std::string kind = "cpu";
  if (!device.IsUndefined()) {
    CUTOUT_THROW_TYPE_IF(!device.IsString(), env, "ERR_CUTOUT_ARG",
                         "Expected 'cpu' or 'cuda' for options.device but received ", TypeName(device));
    kind = device.As<Napi::String>().Utf8Value();
    CUTOUT_THROW_TYPE_IF(kind != "cpu" && kind != "cuda", env, "ERR_CUTOUT_ARG",
                         "Expected 'cpu' or 'cuda' for options.device but received '", kind, "'");
  }
  if (kind == "cuda") {
    Napi::Value id = o.Get("deviceId");
    settings.cuda_device = id.IsUndefined() ? 0 : IntArg(id, "options.deviceId", 0, 63);
    Napi::Value extra = o.Get("cudaOptions");
    if (!extra.IsUndefined()) {
      CUTOUT_THROW_TYPE_IF(!extra.IsString(), env, "ERR_CUTOUT_ARG",
                           "Expected a string for options.cudaOptions but received ", TypeName(extra));
      try {
        settings.cuda_options = ParseCudaOptions(extra.As<Napi::String>().Utf8Value());
      } catch (const std::invalid_argument& e) {
        throw CodedError(env, "ERR_CUTOUT_ARG", e.what(), true);
      }
    }
  }
  return settings;
}

namespace {

// An optional string option that must be one of two words; absent gives the first.
bool SecondWord(const Napi::Object& o, const char* key, const char* first, const char* second) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined()) return false;
  const std::string text = v.IsString() ? v.As<Napi::String>().Utf8Value() : std::string();
  CUTOUT_THROW_TYPE_IF(text != first && text != second, o.Env(), "ERR_CUTOUT_ARG", "Expected '", first, "' or '",
                       second, "' for options.", key, " but received ",
                       v.IsString() ? Concat("'", text, "'") : std::string(TypeName(v)));
  return text == second;
}

}  // namespace

Normalisation NormalisationFrom(const Napi::Object& o) {
  Napi::Env env = o.Env();
  Normalisation norm{};
  for (const char* key : {"mean", "std"}) {
    Napi::Value v = o.Get(key);
    CUTOUT_THROW_TYPE_IF(!v.IsArray() || v.As<Napi::Array>().Length() != 3, env, "ERR_CUTOUT_ARG",
                         "Expected an array of 3 numbers for options.", key);
    Napi::Array a = v.As<Napi::Array>();
    for (uint32_t c = 0; c < 3; c++) {
      Napi::Value n = a.Get(c);
      CUTOUT_THROW_TYPE_IF(!n.IsNumber(), env, "ERR_CUTOUT_ARG", "Expected numbers in options.", key);
      const float f = n.As<Napi::Number>().FloatValue();
      if (key[0] == 'm') {
        norm.mean[c] = f;
      } else {
        CUTOUT_THROW_TYPE_IF(!(f > 0), env, "ERR_CUTOUT_ARG", "Expected positive numbers in options.std");
        norm.std[c] = f;
      }
    }
  }
  return norm;
}

int OutputRankFrom(const Napi::Object& o) {
  Napi::Value rank = o.Get("outputRank");
  return rank.IsUndefined() ? 4 : IntArg(rank, "options.outputRank", 3, 4);
}

bool InputIsNhwc(const Napi::Object& o) { return SecondWord(o, "layout", "nchw", "nhwc"); }

bool TensorIsHalf(const Napi::Object& o, const char* key) { return SecondWord(o, key, "float32", "float16"); }

MaskPostprocess MaskPostprocessFrom(const Napi::Object& o) {
  MaskPostprocess p;
  if (SecondWord(o, "activation", "none", "sigmoid")) p.activation = OutputActivation::kSigmoid;
  if (SecondWord(o, "range", "unit", "minmax")) p.range = OutputRange::kMinMax;
  return p;
}

}  // namespace cutout
