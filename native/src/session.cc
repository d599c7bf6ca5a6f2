// SPDX-License-Identifier: MIT
#include "session.h"

#include <sys/stat.h>

#include <array>

#include "composite.h"
#include "composite_args.h"
#include "cuda_provider.h"
#include "half.h"
#include "memory.h"
#include "napi_util.h"
#include "session_args.h"

namespace cutout {

Napi::Function Session::Define(Napi::Env env) {
  return DefineClass(env, "Session",
                     {
                         InstanceMethod<&Session::JsInfer>("infer"),
                         InstanceMethod<&Session::JsComposite>("composite"),
                         InstanceMethod<&Session::JsClose>("close"),
                         InstanceMethod<&Session::JsReleaseTensors>("releaseTensors"),
                         InstanceAccessor<&Session::JsInputTensor>("inputTensor"),
                         InstanceAccessor<&Session::JsOutputTensor>("outputTensor"),
                     });
}

// new Session(modelPath, { threads, inputName, outputName, width, height, mean: [3], std: [3],
//                          activation?: 'none'|'sigmoid', range?: 'unit'|'minmax', outputRank?: 3|4,
//                          layout?: 'nchw'|'nhwc', inputType?, outputType?: 'float32'|'float16',
//                          memoryPattern?: boolean (false),
//                          device?: 'cpu'|'cuda', deviceId?, cudaOptions? })
Session::Session(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Session>(info) {
  Napi::Env env = info.Env();
  CUTOUT_THROW_TYPE_IF(info.Length() < 2 || !info[0].IsString() || !info[1].IsObject(), env, "ERR_CUTOUT_ARG",
                       "Expected (modelPath: string, options: object) for Session");
  const std::string path = info[0].As<Napi::String>().Utf8Value();
  Napi::Object o = info[1].As<Napi::Object>();
  ModelSettings settings = ModelSettingsFrom(o);
  width_ = IntArg(o.Get("width"), "options.width", 1, 8192);
  height_ = IntArg(o.Get("height"), "options.height", 1, 8192);
  CUTOUT_THROW_TYPE_IF(!o.Get("inputName").IsString() || !o.Get("outputName").IsString(), env, "ERR_CUTOUT_ARG",
                       "Expected strings for options.inputName and options.outputName");
  input_name_ = o.Get("inputName").As<Napi::String>().Utf8Value();
  output_name_ = o.Get("outputName").As<Napi::String>().Utf8Value();
  norm_ = NormalisationFrom(o);
  post_ = MaskPostprocessFrom(o);
  output_rank_ = OutputRankFrom(o);
  nhwc_ = InputIsNhwc(o);
  half_input_ = TensorIsHalf(o, "inputType");
  half_output_ = TensorIsHalf(o, "outputType");
  struct stat st;
  CUTOUT_THROW_IF(stat(path.c_str(), &st) != 0, env, "ERR_CUTOUT_MODEL_MISSING", "Model file not found: ", path);
  try {
    model_ = AcquireModel(path, settings);
  } catch (const CudaProviderError& e) {
    throw CodedError(env, "ERR_CUTOUT_CUDA", e.what());
  } catch (const std::exception& e) {
    throw CodedError(env, "ERR_CUTOUT_MODEL_LOAD", Concat("Could not load model ", path, ": ", e.what()));
  }
  const size_t plane = static_cast<size_t>(width_) * height_;
  input_ = Napi::Persistent(Napi::Float32Array::New(env, 3 * plane));
  output_ = Napi::Persistent(Napi::Float32Array::New(env, plane));
  if (half_input_) input_half_ = Napi::Persistent(Napi::Uint16Array::New(env, 3 * plane));
  if (half_output_) output_half_ = Napi::Persistent(Napi::Uint16Array::New(env, plane));
}

void Session::RequireOpen(Napi::Env env) const {
  CUTOUT_THROW_IF(!model_, env, "ERR_CUTOUT_CLOSED", "Session is closed");
}

float* Session::InputData(Napi::Env env) const {
  Napi::Float32Array a = input_.Value();
  CUTOUT_THROW_IF(a.ArrayBuffer().IsDetached(), env, "ERR_CUTOUT_DETACHED", "The session's input tensor was detached");
  return a.Data();
}

float* Session::OutputData(Napi::Env env) const {
  Napi::Float32Array a = output_.Value();
  CUTOUT_THROW_IF(a.ArrayBuffer().IsDetached(), env, "ERR_CUTOUT_DETACHED", "The session's output tensor was detached");
  return a.Data();
}

uint16_t* Session::HalfData(Napi::Env env, const Napi::Reference<Napi::Uint16Array>& ref) {
  Napi::Uint16Array a = ref.Value();
  CUTOUT_THROW_IF(a.ArrayBuffer().IsDetached(), env, "ERR_CUTOUT_DETACHED",
                  "The session's float16 tensor was detached");
  return a.Data();
}

// infer(pixels: Uint8Array, channels: 3|4): preprocess the model-sized image into the input
// tensor, run the model synchronously (we are on a worker thread), return the output tensor view.
Napi::Value Session::JsInfer(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  RequireOpen(env);
  ByteSpan src = BytesOf(info[0], "pixels");
  const int channels = IntArg(info[1], "channels", 3, 4);
  const size_t expected = static_cast<size_t>(width_) * height_ * channels;
  CUTOUT_THROW_TYPE_IF(src.length != expected, env, "ERR_CUTOUT_BAD_LENGTH", "Expected ", expected, " bytes (", width_,
                       "x", height_, "x", channels, ") for pixels but received ", src.length);
  float* in = InputData(env);
  float* out = OutputData(env);
  if (nhwc_) {
    PreprocessToNhwc(src.data, width_, height_, channels, norm_, in);
  } else {
    PreprocessToNchw(src.data, width_, height_, channels, norm_, in);
  }

  const size_t plane = static_cast<size_t>(width_) * height_;
  Ort::MemoryInfo mem = Ort::MemoryInfo::CreateCpu(OrtDeviceAllocator, OrtMemTypeCPU);
  const std::array<int64_t, 4> in_shape =
      nhwc_ ? std::array<int64_t, 4>{1, height_, width_, 3} : std::array<int64_t, 4>{1, 3, height_, width_};
  const std::array<int64_t, 4> out_shape4{1, 1, height_, width_};
  const std::array<int64_t, 3> out_shape3{1, height_, width_};
  const int64_t* out_shape = output_rank_ == 3 ? out_shape3.data() : out_shape4.data();
  uint16_t* in_half = half_input_ ? HalfData(env, input_half_) : nullptr;
  uint16_t* out_half = half_output_ ? HalfData(env, output_half_) : nullptr;
  if (in_half) FloatToHalf(in, in_half, 3 * plane);
  try {
    // Both tensors wrap memory we own: ORT reads the input and writes the output in place.
    Ort::Value input = in_half ? Ort::Value::CreateTensor(mem, in_half, 3 * plane * sizeof(uint16_t), in_shape.data(),
                                                          in_shape.size(), ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16)
                               : Ort::Value::CreateTensor<float>(mem, in, 3 * plane, in_shape.data(), in_shape.size());
    Ort::Value output = out_half ? Ort::Value::CreateTensor(mem, out_half, plane * sizeof(uint16_t), out_shape,
                                                            output_rank_, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16)
                                 : Ort::Value::CreateTensor<float>(mem, out, plane, out_shape, output_rank_);
    const char* in_names[] = {input_name_.c_str()};
    const char* out_names[] = {output_name_.c_str()};
    model_->session->Run(Ort::RunOptions{nullptr}, in_names, &input, 1, out_names, &output, 1);
  } catch (const std::exception& e) {
    throw CodedError(env, "ERR_CUTOUT_INFERENCE", Concat("Inference failed: ", e.what()));
  }
  if (out_half) HalfToFloat(out_half, out, plane);
  PostprocessMask(out, plane, post_);
  has_output_ = true;
  return output_.Value();
}

// composite(rgba: Uint8Array, width, height, options) → box: the last mask onto rgba (composite_args.h).
Napi::Value Session::JsComposite(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  RequireOpen(env);
  CUTOUT_THROW_IF(!has_output_, env, "ERR_CUTOUT_STATE", "composite() needs a mask: call infer() first");
  const int w = IntArg(info[1], "width", 1, 1 << 16);
  const int h = IntArg(info[2], "height", 1, 1 << 16);
  // Options first: their getters run JS, which could detach a buffer taken before.
  const CompositeParams p = CompositeOptionsArg(info[3], w, h);
  ByteSpan rgba = BytesOf(info[0], "rgba");
  const size_t expected = static_cast<size_t>(w) * h * 4;
  CUTOUT_THROW_TYPE_IF(rgba.length != expected, env, "ERR_CUTOUT_BAD_LENGTH", "Expected ", expected, " bytes (", w, "x",
                       h, "x4) for rgba but received ", rgba.length);
  return RunComposite(env, rgba.data, w, h, OutputData(env), width_, height_, p);
}

Napi::Value Session::JsClose(const Napi::CallbackInfo& info) {
  model_.reset();
  return info.Env().Undefined();
}

// releaseTensors(): the input and output tensors' pages go back to the system (16 MB at 1024², 8 MB more for float16
// tensors); they read as zeros until the next infer(), which composite() now needs first. The pool's idle release.
Napi::Value Session::JsReleaseTensors(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const size_t plane = static_cast<size_t>(width_) * height_;
  DropPages(InputData(env), 3 * plane * sizeof(float));
  DropPages(OutputData(env), plane * sizeof(float));
  if (half_input_) DropPages(HalfData(env, input_half_), 3 * plane * sizeof(uint16_t));
  if (half_output_) DropPages(HalfData(env, output_half_), plane * sizeof(uint16_t));
  has_output_ = false;
  return env.Undefined();
}

Napi::Value Session::JsInputTensor(const Napi::CallbackInfo& info) { return input_.Value(); }
Napi::Value Session::JsOutputTensor(const Napi::CallbackInfo& info) { return output_.Value(); }

}  // namespace cutout
