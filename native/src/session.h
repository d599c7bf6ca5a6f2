// SPDX-License-Identifier: MIT
// JS class Session: one per worker thread. Owns that worker's input/output tensors (memory that JS
// can see without copies) and holds a reference to the process-wide shared model.
#pragma once

#include <napi.h>

#include <memory>
#include <string>

#include "ort_env.h"
#include "postprocess.h"
#include "preprocess.h"

namespace cutout {

class Session : public Napi::ObjectWrap<Session> {
 public:
  static Napi::Function Define(Napi::Env env);
  explicit Session(const Napi::CallbackInfo& info);

 private:
  Napi::Value JsInfer(const Napi::CallbackInfo& info);
  Napi::Value JsComposite(const Napi::CallbackInfo& info);
  Napi::Value JsClose(const Napi::CallbackInfo& info);
  Napi::Value JsReleaseTensors(const Napi::CallbackInfo& info);
  Napi::Value JsInputTensor(const Napi::CallbackInfo& info);
  Napi::Value JsOutputTensor(const Napi::CallbackInfo& info);

  void RequireOpen(Napi::Env env) const;
  float* InputData(Napi::Env env) const;
  float* OutputData(Napi::Env env) const;
  static uint16_t* HalfData(Napi::Env env, const Napi::Reference<Napi::Uint16Array>& ref);

  std::shared_ptr<SharedModel> model_;
  std::string input_name_;
  std::string output_name_;
  int width_ = 0;
  int height_ = 0;
  Normalisation norm_{};
  // The family's output convention (src/model/families.ts), applied to the output tensor in place.
  MaskPostprocess post_{};
  // 4: [1, 1, H, W] (default); 3: [1, H, W].
  int output_rank_ = 4;
  // The input's layout: [1, 3, H, W] (default) or channels last, [1, H, W, 3].
  bool nhwc_ = false;
  // float16 tensors in the file (an fp16 export without float32 casts at its ends): ORT reads and
  // writes the half buffers below; the float tensors stay what JS and the composite see.
  bool half_input_ = false;
  bool half_output_ = false;
  bool has_output_ = false;
  // Tensor memory lives in JS ArrayBuffers (stable backing stores) so tests and benchmarks read
  // it without copies; the references keep them alive as long as this Session.
  Napi::Reference<Napi::Float32Array> input_;
  Napi::Reference<Napi::Float32Array> output_;
  Napi::Reference<Napi::Uint16Array> input_half_;   // only with half_input_
  Napi::Reference<Napi::Uint16Array> output_half_;  // only with half_output_
};

}  // namespace cutout
