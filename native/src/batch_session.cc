// SPDX-License-Identifier: MIT
#include "batch_session.h"

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "cuda_provider.h"
#include "half.h"
#include "napi_util.h"
#include "session_args.h"

namespace cutout {

namespace {
constexpr size_t kAlign = 4096;

// The model's input element type (uint8: a bundled batch model; float or float16: a model file).
ONNXTensorElementDataType InputType(Ort::Session& s, const std::string& in) {
  const auto names = s.GetInputNames();
  for (size_t i = 0; i < names.size(); i++) {
    if (names[i] == in) return s.GetInputTypeInfo(i).GetTensorTypeAndShapeInfo().GetElementType();
  }
  throw std::runtime_error("the model has no input named '" + in + "'");
}

// Bytes per value of the three tensor types a batch can hold.
size_t ElementBytes(ONNXTensorElementDataType t) {
  if (t == ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8) return 1;
  return t == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16 ? sizeof(uint16_t) : sizeof(float);
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string seen;
  for (int64_t d : shape) seen += (seen.empty() ? "" : ", ") + (d < 0 ? std::string("N") : std::to_string(d));
  return "[" + seen + "]";
}

// What the session was told of the model, checked against it.
struct Contract {
  bool normalised;  // float input normalised here; else uint8 NHWC RGB
  bool nhwc;
  ONNXTensorElementDataType in_type, out_type;
  int out_rank;
};

// Fails the construction with a sentence when the model does not take the batch the session will
// give it (uint8 NHWC RGB, or the float type and layout it was told, with a symbolic batch) or give
// one mask per image of the type and rank it was told.
void CheckModelContract(Ort::Session& s, const std::string& in, const std::string& out, int w, int h,
                        const Contract& c) {
  auto find = [](std::vector<std::string> names, const std::string& name) {
    for (size_t i = 0; i < names.size(); i++) {
      if (names[i] == name) return static_cast<int>(i);
    }
    return -1;
  };
  const int ii = find(s.GetInputNames(), in);
  const int oi = find(s.GetOutputNames(), out);
  if (ii < 0) throw std::runtime_error("the model has no input named '" + in + "'");
  if (oi < 0) throw std::runtime_error("the model has no output named '" + out + "'");
  // The shape info is a view into the TypeInfo: keep that alive.
  Ort::TypeInfo in_type = s.GetInputTypeInfo(ii);
  auto it = in_type.GetTensorTypeAndShapeInfo();
  auto shape = it.GetShape();
  const std::string hw = std::to_string(h) + ", " + std::to_string(w);
  const bool nhwc_shape = shape.size() == 4 && (shape[3] == 3 || shape[3] < 0) && (shape[1] < 0 || shape[1] == h) &&
                          (shape[2] < 0 || shape[2] == w);
  const bool nchw_shape = shape.size() == 4 && (shape[1] == 3 || shape[1] < 0) && (shape[2] < 0 || shape[2] == h) &&
                          (shape[3] < 0 || shape[3] == w);
  const bool fits = it.GetElementType() == c.in_type && (c.nhwc ? nhwc_shape : nchw_shape) && shape[0] < 0;
  if (!fits) {
    const std::string want =
        c.normalised ? std::string(c.in_type == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16 ? "float16" : "float") +
                           (c.nhwc ? " [N, " + hw + ", 3]" : " [N, 3, " + hw + "]")
                     : "uint8 [N, " + hw + ", 3]";
    throw std::runtime_error("input '" + in + "' must be " + want +
                             " with a symbolic batch dimension (a batch model of models/manifest.json, or a model file "
                             "whose batch is N), not type " +
                             std::to_string(it.GetElementType()) + " " + ShapeText(shape));
  }
  Ort::TypeInfo out_type = s.GetOutputTypeInfo(oi);
  auto ot = out_type.GetTensorTypeAndShapeInfo();
  const auto oshape = ot.GetShape();
  if (ot.GetElementType() != c.out_type) {
    throw std::runtime_error("output '" + out + "' must be " +
                             (c.out_type == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16 ? "float16" : "float"));
  }
  if (static_cast<int>(oshape.size()) != c.out_rank || oshape[0] > 0) {
    throw std::runtime_error("output '" + out + "' must be one mask per image with a symbolic batch, " +
                             (c.out_rank == 3 ? "[N, " + hw + "]" : "[N, 1, " + hw + "]") + ", not " +
                             ShapeText(oshape));
  }
}
}  // namespace

BatchSession::HostBuffer::~HostBuffer() {
  if (!data) return;
  if (allocator) {
    allocator->Free(allocator, data);
  } else {
    std::free(data);
  }
}

Napi::Function BatchSession::Define(Napi::Env env) {
  return DefineClass(env, "BatchSession",
                     {
                         InstanceMethod<&BatchSession::JsRun>("run"),
                         InstanceMethod<&BatchSession::JsWarmUp>("warmUp"),
                         InstanceMethod<&BatchSession::JsClose>("close"),
                         InstanceAccessor<&BatchSession::JsBuckets>("buckets"),
                         InstanceAccessor<&BatchSession::JsPinned>("pinned"),
                         InstanceAccessor<&BatchSession::JsPinnedError>("pinnedError"),
                     });
}

// new BatchSession(modelPath, { threads, inputName, outputName, width, height, maxBatch, device?, deviceId?,
//                               cudaOptions?, memoryPattern?, pinned?: boolean (true),
//                               and for a float model (a model file): mean, std, layout?, inputType?,
//                               outputType?, outputRank?, activation?, range? as Session takes them })
BatchSession::BatchSession(const Napi::CallbackInfo& info) : Napi::ObjectWrap<BatchSession>(info) {
  Napi::Env env = info.Env();
  CUTOUT_THROW_TYPE_IF(info.Length() < 2 || !info[0].IsString() || !info[1].IsObject(), env, "ERR_CUTOUT_ARG",
                       "Expected (modelPath: string, options: object) for BatchSession");
  const std::string path = info[0].As<Napi::String>().Utf8Value();
  Napi::Object o = info[1].As<Napi::Object>();
  ModelSettings settings = ModelSettingsFrom(o);
  width_ = IntArg(o.Get("width"), "options.width", 1, 8192);
  height_ = IntArg(o.Get("height"), "options.height", 1, 8192);
  max_batch_ = IntArg(o.Get("maxBatch"), "options.maxBatch", 1, 256);
  CUTOUT_THROW_TYPE_IF(!o.Get("inputName").IsString() || !o.Get("outputName").IsString(), env, "ERR_CUTOUT_ARG",
                       "Expected strings for options.inputName and options.outputName");
  input_name_ = o.Get("inputName").As<Napi::String>().Utf8Value();
  output_name_ = o.Get("outputName").As<Napi::String>().Utf8Value();
  const bool want_pinned = OptionalBool(o, "pinned", true);
  for (int b = 1; b < max_batch_; b *= 2) buckets_.push_back(b);
  buckets_.push_back(max_batch_);

  struct stat st;
  CUTOUT_THROW_IF(stat(path.c_str(), &st) != 0, env, "ERR_CUTOUT_MODEL_MISSING", "Model file not found: ", path);
  try {
    model_ = AcquireModel(path, settings);
    // A uint8 input is a bundled batch model's (it normalises itself); anything else is normalised here.
    normalised_ = InputType(*model_->session, input_name_) != ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8;
    const auto f16 = [](bool half) {
      return half ? ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16 : ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;
    };
    if (normalised_) {
      norm_ = NormalisationFrom(o);
      nhwc_ = InputIsNhwc(o);
      half_input_ = TensorIsHalf(o, "inputType");
      half_output_ = TensorIsHalf(o, "outputType");
      output_rank_ = OutputRankFrom(o);
      post_ = MaskPostprocessFrom(o);
    }
    in_type_ = normalised_ ? f16(half_input_) : ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8;
    out_type_ = f16(half_output_);
    const Contract contract{normalised_, nhwc_, in_type_, out_type_, output_rank_};
    CheckModelContract(*model_->session, input_name_, output_name_, width_, height_, contract);
  } catch (const Napi::Error&) {
    throw;
  } catch (const CudaProviderError& e) {
    throw CodedError(env, "ERR_CUTOUT_CUDA", e.what());
  } catch (const std::exception& e) {
    throw CodedError(env, "ERR_CUTOUT_MODEL_LOAD", Concat("Could not load model ", path, ": ", e.what()));
  }

  const size_t plane = static_cast<size_t>(width_) * height_;
  input_.bytes = plane * 3 * ElementBytes(in_type_) * max_batch_;
  output_.bytes = plane * ElementBytes(out_type_) * max_batch_;
  if (half_input_) plane_.resize(plane * 3);
  if (settings.cuda_device >= 0 && want_pinned) {
    // The CUDA provider registers a page-locked host allocator with the session; without it (an
    // older provider, say) the batch still runs from ordinary memory, only with slower copies.
    try {
      Ort::MemoryInfo pinned_info("CudaPinned", OrtDeviceAllocator, settings.cuda_device, OrtMemTypeCPUOutput);
      pinned_allocator_ = std::make_unique<Ort::Allocator>(*model_->session, pinned_info);
      input_.data = pinned_allocator_->Alloc(input_.bytes);
      input_.allocator = *pinned_allocator_;
      output_.data = pinned_allocator_->Alloc(output_.bytes);
      output_.allocator = *pinned_allocator_;
      host_info_ = std::make_unique<Ort::MemoryInfo>("CudaPinned", OrtDeviceAllocator, settings.cuda_device,
                                                     OrtMemTypeCPUOutput);
      pinned_ = true;
    } catch (const Ort::Exception&) {
      pinned_ = false;
    }
  }
  if (!pinned_) {
    try {
      UsePageableBuffers();
    } catch (const std::bad_alloc&) {
      throw CodedError(env, "ERR_CUTOUT_MEMORY",
                       Concat("Could not allocate ", input_.bytes + output_.bytes, " bytes for the batch"));
    }
  }
  // Padding slots are never read back; zero them once so they hold a valid image.
  std::memset(input_.data, 0, input_.bytes);
}

void BatchSession::UsePageableBuffers() {
  for (HostBuffer* b : {&input_, &output_}) {
    void* fresh = std::aligned_alloc(kAlign, (b->bytes + kAlign - 1) / kAlign * kAlign);
    if (!fresh) throw std::bad_alloc();
    if (b == &input_ && b->data) std::memcpy(fresh, b->data, b->bytes);  // the batch about to be rerun
    if (b->data && b->allocator) b->allocator->Free(b->allocator, b->data);
    b->allocator = nullptr;
    b->data = fresh;
  }
  host_info_ = std::make_unique<Ort::MemoryInfo>(Ort::MemoryInfo::CreateCpu(OrtDeviceAllocator, OrtMemTypeCPU));
  pinned_ = false;
}

void BatchSession::RequireOpen(Napi::Env env) const {
  CUTOUT_THROW_IF(!model_, env, "ERR_CUTOUT_CLOSED", "BatchSession is closed");
}

int BatchSession::Bucket(int count) const {
  for (int b : buckets_) {
    if (b >= count) return b;
  }
  return max_batch_;
}

void BatchSession::RunSlots(int count) {
  if (!pinned_) return RunBound(count);
  try {
    RunBound(count);
  } catch (const Ort::Exception& e) {
    // Seen with ORT 1.29's CUDA provider on an H200: a batch bound to page-locked buffers fails in
    // its warm-up with gpu_data_transfer.cc "dst_data != src_data was false" (a host-side copy whose
    // source and destination are one buffer). Ordinary buffers then, for the session's life, and
    // the reason stays readable (pinnedError); the batch is run again from the same input bytes.
    pinned_error_ = e.what();
    UsePageableBuffers();
    RunBound(count);
  }
}

void BatchSession::RunBound(int count) {
  const int batch = Bucket(count);
  const std::array<int64_t, 4> in_shape =
      nhwc_ ? std::array<int64_t, 4>{batch, height_, width_, 3} : std::array<int64_t, 4>{batch, 3, height_, width_};
  const std::array<int64_t, 4> out_shape4{batch, 1, height_, width_};
  const std::array<int64_t, 3> out_shape3{batch, height_, width_};
  const size_t plane = static_cast<size_t>(width_) * height_;
  Ort::Value input = Ort::Value::CreateTensor(*host_info_, input_.data, plane * 3 * ElementBytes(in_type_) * batch,
                                              in_shape.data(), in_shape.size(), in_type_);
  Ort::Value output =
      Ort::Value::CreateTensor(*host_info_, output_.data, plane * ElementBytes(out_type_) * batch,
                               output_rank_ == 3 ? out_shape3.data() : out_shape4.data(), output_rank_, out_type_);
  // Binding tensors over our buffers: ORT copies the batch to the device and the masks back into
  // `output_` itself, with no tensor of its own in between.
  Ort::IoBinding binding(*model_->session);
  binding.BindInput(input_name_.c_str(), input);
  binding.BindOutput(output_name_.c_str(), output);
  model_->session->Run(Ort::RunOptions{}, binding);
  binding.SynchronizeOutputs();
}

// run(images: Uint8Array[], outputs?: Float32Array[]) → Float32Array[]: images are height×width×3 RGB
// bytes, at most maxBatch; each mask a 0..1 float matte (a float model's activation and range
// applied, per photo). outputs[i], where given, is the mask for images[i] (written and returned):
// the masks of earlier batches handed back, so their pages are resident instead of a fresh 4 MiB
// mapping faulted in for every photo (docs/gpu.md, "Page faults on the staged path").
Napi::Value BatchSession::JsRun(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  RequireOpen(env);
  CUTOUT_THROW_TYPE_IF(!info[0].IsArray(), env, "ERR_CUTOUT_ARG", "Expected an array of Uint8Array for images");
  Napi::Array images = info[0].As<Napi::Array>();
  const uint32_t count = images.Length();
  CUTOUT_THROW_TYPE_IF(count < 1 || count > static_cast<uint32_t>(max_batch_), env, "ERR_CUTOUT_ARG", "Expected 1 to ",
                       max_batch_, " images but received ", count);
  const size_t plane = static_cast<size_t>(width_) * height_;
  // Check every image before copying any: a bad one fails the call, never half a batch.
  std::vector<ByteSpan> spans;
  spans.reserve(count);
  for (uint32_t i = 0; i < count; i++) {
    ByteSpan s = BytesOf(images.Get(i), "images[i]");
    CUTOUT_THROW_TYPE_IF(s.length != plane * 3, env, "ERR_CUTOUT_BAD_LENGTH", "Expected ", plane * 3, " bytes (",
                         width_, "x", height_, "x3) for images[", i, "] but received ", s.length);
    spans.push_back(s);
  }
  std::vector<Napi::Float32Array> given;
  if (!info[1].IsUndefined() && !info[1].IsNull()) {
    CUTOUT_THROW_TYPE_IF(!info[1].IsArray(), env, "ERR_CUTOUT_ARG", "Expected an array of Float32Array for outputs");
    Napi::Array outputs = info[1].As<Napi::Array>();
    const uint32_t n = std::min(outputs.Length(), count);
    for (uint32_t i = 0; i < n; i++) {
      Napi::Value v = outputs.Get(i);
      const bool ok = v.IsTypedArray() && v.As<Napi::TypedArray>().TypedArrayType() == napi_float32_array;
      CUTOUT_THROW_TYPE_IF(!ok, env, "ERR_CUTOUT_ARG", "Expected a Float32Array for outputs[", i, "]");
      Napi::Float32Array out = v.As<Napi::Float32Array>();
      CUTOUT_THROW_TYPE_IF(out.ElementLength() != plane, env, "ERR_CUTOUT_BAD_LENGTH", "Expected ", plane, " floats (",
                           width_, "x", height_, ") for outputs[", i, "] but received ", out.ElementLength());
      given.push_back(out);
    }
  }
  for (uint32_t i = 0; i < count; i++) {
    uint8_t* slot = static_cast<uint8_t*>(input_.data) + plane * 3 * ElementBytes(in_type_) * i;
    if (!normalised_) {
      std::memcpy(slot, spans[i].data, plane * 3);
      continue;
    }
    // As Session normalises one photo: into the slot, or into the float plane on its way to float16.
    float* into = half_input_ ? plane_.data() : reinterpret_cast<float*>(slot);
    if (nhwc_) {
      PreprocessToNhwc(spans[i].data, width_, height_, 3, norm_, into);
    } else {
      PreprocessToNchw(spans[i].data, width_, height_, 3, norm_, into);
    }
    if (half_input_) FloatToHalf(into, reinterpret_cast<uint16_t*>(slot), plane * 3);
  }
  try {
    RunSlots(static_cast<int>(count));
  } catch (const std::exception& e) {
    throw CodedError(env, "ERR_CUTOUT_INFERENCE", Concat("Inference failed: ", e.what()));
  }
  Napi::Array out = Napi::Array::New(env, count);
  for (uint32_t i = 0; i < count; i++) {
    Napi::Float32Array mask = i < given.size() ? given[i] : Napi::Float32Array::New(env, plane);
    if (half_output_) {
      HalfToFloat(static_cast<uint16_t*>(output_.data) + plane * i, mask.Data(), plane);
    } else {
      std::memcpy(mask.Data(), static_cast<float*>(output_.data) + plane * i, plane * sizeof(float));
    }
    PostprocessMask(mask.Data(), plane, post_);  // per photo: a min-max range is each mask's own
    out.Set(i, mask);
  }
  return out;
}

// warmUp() → number[]: runs every bucket once (cuDNN picks its algorithms for each shape); ms each.
Napi::Value BatchSession::JsWarmUp(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  RequireOpen(env);
  Napi::Array times = Napi::Array::New(env, buckets_.size());
  for (size_t i = 0; i < buckets_.size(); i++) {
    const auto t0 = std::chrono::steady_clock::now();
    try {
      RunSlots(buckets_[i]);
    } catch (const std::exception& e) {
      throw CodedError(env, "ERR_CUTOUT_INFERENCE", Concat("Warm-up at batch ", buckets_[i], " failed: ", e.what()));
    }
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    times.Set(static_cast<uint32_t>(i), ms);
  }
  return times;
}

Napi::Value BatchSession::JsClose(const Napi::CallbackInfo& info) {
  model_.reset();
  return info.Env().Undefined();
}

Napi::Value BatchSession::JsBuckets(const Napi::CallbackInfo& info) {
  Napi::Array a = Napi::Array::New(info.Env(), buckets_.size());
  for (size_t i = 0; i < buckets_.size(); i++) a.Set(static_cast<uint32_t>(i), buckets_[i]);
  return a;
}

Napi::Value BatchSession::JsPinned(const Napi::CallbackInfo& info) { return Napi::Boolean::New(info.Env(), pinned_); }

Napi::Value BatchSession::JsPinnedError(const Napi::CallbackInfo& info) {
  if (pinned_error_.empty()) return info.Env().Null();
  return Napi::String::New(info.Env(), pinned_error_);
}

}  // namespace cutout
