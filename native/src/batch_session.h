// SPDX-License-Identifier: MIT
// JS class BatchSession: runs a batch-capable model on several images at once (the GPU path: one
// request's photo per batch slot). A bundled batch model takes the photos' bytes as they are, uint8
// [N, height, width, 3] RGB, and normalises them itself (src/model: the u8-nhwc-input transform),
// so the host side copies 3 bytes a pixel into the batch and nothing else. A model file of the
// user's own with a symbolic batch dimension takes float32 or float16 [N, 3, H, W] (or NHWC): each
// photo is normalised into its slot with the file's mean and std, as Session does for one. Outputs
// are masks, [N, 1, H, W] or [N, H, W], float32 or float16, each brought to a 0..1 float matte (the
// family's activation and range, per photo) in a Float32Array with its own ArrayBuffer (transferable).
//
// Batches are padded to the next "bucket" size (powers of two up to maxBatch, and maxBatch): cuDNN
// tunes its convolutions once per input shape, so a few shapes, all tuned by warmUp() at start,
// keep a new batch size from stalling a request for seconds. Host buffers are page-locked (CUDA
// pinned, from the provider's allocator) when the model runs on a GPU: copies then go by DMA.
#pragma once

#include <napi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ort_env.h"
#include "postprocess.h"
#include "preprocess.h"

namespace cutout {

class BatchSession : public Napi::ObjectWrap<BatchSession> {
 public:
  static Napi::Function Define(Napi::Env env);
  explicit BatchSession(const Napi::CallbackInfo& info);

 private:
  Napi::Value JsRun(const Napi::CallbackInfo& info);
  Napi::Value JsWarmUp(const Napi::CallbackInfo& info);
  Napi::Value JsClose(const Napi::CallbackInfo& info);
  Napi::Value JsBuckets(const Napi::CallbackInfo& info);
  Napi::Value JsPinned(const Napi::CallbackInfo& info);
  Napi::Value JsPinnedError(const Napi::CallbackInfo& info);

  // Runs the first `count` slots of the input buffer as a batch of Bucket(count); the masks land in
  // the output buffer's first `count` slots.
  void RunSlots(int count);
  void RunBound(int count);
  // Replaces page-locked buffers by ordinary ones (the input's bytes kept) for the session's life.
  void UsePageableBuffers();
  int Bucket(int count) const;
  void RequireOpen(Napi::Env env) const;

  struct HostBuffer {
    void* data = nullptr;
    size_t bytes = 0;
    OrtAllocator* allocator = nullptr;  // null: std::aligned_alloc memory
    ~HostBuffer();
  };

  std::shared_ptr<SharedModel> model_;
  std::string input_name_;
  std::string output_name_;
  int width_ = 0;
  int height_ = 0;
  int max_batch_ = 1;
  std::vector<int> buckets_;
  bool pinned_ = false;
  std::string pinned_error_;  // why page-locked buffers were given up, if they were
  // Float input (a model file): normalised into the slots; false for a bundled uint8 batch model.
  bool normalised_ = false;
  Normalisation norm_{};
  bool nhwc_ = true;
  bool half_input_ = false;
  bool half_output_ = false;
  int output_rank_ = 4;
  // The tensors' element types, from the above: uint8 / float / float16 in, float / float16 out.
  ONNXTensorElementDataType in_type_ = ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8;
  ONNXTensorElementDataType out_type_ = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;
  MaskPostprocess post_{};
  std::vector<float> plane_;  // one photo's float input on its way to float16
  std::unique_ptr<Ort::MemoryInfo> host_info_;
  std::unique_ptr<Ort::Allocator> pinned_allocator_;
  HostBuffer input_;
  HostBuffer output_;
};

}  // namespace cutout
