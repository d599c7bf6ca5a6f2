// SPDX-License-Identifier: MIT
// Argument guards and coded errors for the JS-facing files (addon.cc, session.cc).
#pragma once

#include <napi.h>

#include <cstdint>
#include <sstream>
#include <string>

namespace cutout {

// Throw a JS Error (or TypeError) carrying a stable `.code`, so the worker can map it.
inline Napi::Error CodedError(Napi::Env env, const char* code, const std::string& message, bool type_error = false) {
  Napi::Error err = type_error ? Napi::TypeError::New(env, message) : Napi::Error::New(env, message);
  err.Set("code", Napi::String::New(env, code));
  return err;
}

template <typename... Args>
std::string Concat(Args&&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

#define CUTOUT_THROW_TYPE_IF(cond, env, code, ...)                                            \
  do {                                                                                        \
    if (cond) throw ::cutout::CodedError((env), (code), ::cutout::Concat(__VA_ARGS__), true); \
  } while (0)

#define CUTOUT_THROW_IF(cond, env, code, ...)                                           \
  do {                                                                                  \
    if (cond) throw ::cutout::CodedError((env), (code), ::cutout::Concat(__VA_ARGS__)); \
  } while (0)

// A byteOffset-aware view of a TypedArray's bytes (never the whole backing ArrayBuffer).
struct ByteSpan {
  uint8_t* data = nullptr;
  size_t length = 0;
};

inline ByteSpan BytesOf(const Napi::Value& v, const char* name) {
  Napi::Env env = v.Env();
  CUTOUT_THROW_TYPE_IF(!v.IsTypedArray(), env, "ERR_CUTOUT_ARG", "Expected a Uint8Array for ", name, " but received ",
                       v.IsNull()        ? "null"
                       : v.IsUndefined() ? "undefined"
                                         : "another type");
  Napi::TypedArray ta = v.As<Napi::TypedArray>();
  CUTOUT_THROW_TYPE_IF(ta.TypedArrayType() != napi_uint8_array && ta.TypedArrayType() != napi_uint8_clamped_array, env,
                       "ERR_CUTOUT_ARG", "Expected a Uint8Array for ", name);
  Napi::Uint8Array u8 = v.As<Napi::Uint8Array>();
  CUTOUT_THROW_IF(u8.ArrayBuffer().IsDetached(), env, "ERR_CUTOUT_DETACHED", "The buffer for ", name, " is detached");
  return ByteSpan{u8.Data(), u8.ByteLength()};
}

// How a value that broke the contract is named in messages.
inline const char* TypeName(const Napi::Value& v) {
  return v.IsUndefined() ? "undefined"
         : v.IsNull()    ? "null"
         : v.IsNumber()  ? "a number"
         : v.IsString()  ? "a string"
         : v.IsBoolean() ? "a boolean"
                         : "another type";
}

// The one rule for boolean options: options.<key> must be a boolean; absent means `fallback`, or is
// itself refused when there is none (required). Nothing is coerced.
inline bool BoolOption(const Napi::Object& o, const char* key, const bool* fallback) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined() && fallback) return *fallback;
  CUTOUT_THROW_TYPE_IF(!v.IsBoolean(), o.Env(), "ERR_CUTOUT_ARG", "Expected a boolean for options.", key,
                       " but received ", TypeName(v));
  return v.As<Napi::Boolean>().Value();
}

inline bool OptionalBool(const Napi::Object& o, const char* key, bool fallback) {
  return BoolOption(o, key, &fallback);
}
inline bool RequiredBool(const Napi::Object& o, const char* key) { return BoolOption(o, key, nullptr); }

inline int32_t IntArg(const Napi::Value& v, const char* name, int32_t lo, int32_t hi) {
  Napi::Env env = v.Env();
  CUTOUT_THROW_TYPE_IF(!v.IsNumber(), env, "ERR_CUTOUT_ARG", "Expected an integer for ", name);
  double d = v.As<Napi::Number>().DoubleValue();
  CUTOUT_THROW_TYPE_IF(!(d >= lo && d <= hi) || d != static_cast<double>(static_cast<int64_t>(d)), env,
                       "ERR_CUTOUT_ARG", "Expected an integer between ", lo, " and ", hi, " for ", name,
                       " but received ", d);
  return static_cast<int32_t>(d);
}

}  // namespace cutout
