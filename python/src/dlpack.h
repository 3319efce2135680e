/*
 * dlpack.h — the DLPack data structures, written from the published specification
 * (https://dmlc.github.io/dlpack/latest/, ABI version 1.x). Only what parprim's module
 * reads and writes is declared. Capsule names and the ownership rules are in
 * _parprim.c, where they are used.
 */
#ifndef PPY_DLPACK_H
#define PPY_DLPACK_H

#include <stdint.h>

#define PPY_DLPACK_MAJOR 1
#define PPY_DLPACK_MINOR 1

/* the device kinds the module meets; the numbers are the specification's */
typedef enum {
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3, /* pinned host memory, readable by the CPU */
  kDLROCM = 10,
  kDLCUDAManaged = 13
} DLDeviceType;

typedef struct {
  DLDeviceType device_type;
  int32_t device_id;
} DLDevice;

typedef enum { kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4, kDLComplex = 5, kDLBool = 6 } DLDataTypeCode;

typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} DLDataType;

typedef struct {
  void *data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t *shape;
  int64_t *strides; /* in elements; NULL means compact row-major */
  uint64_t byte_offset;
} DLTensor;

/* the legacy (unversioned) form, capsule name "dltensor" */
typedef struct DLManagedTensor {
  DLTensor dl_tensor;
  void *manager_ctx;
  void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;

typedef struct {
  uint32_t major;
  uint32_t minor;
} DLPackVersion;

#define DLPACK_FLAG_BITMASK_READ_ONLY (UINT64_C(1) << 0)
#define DLPACK_FLAG_BITMASK_IS_COPIED (UINT64_C(1) << 1)

/* the versioned form (DLPack >= 1.0), capsule name "dltensor_versioned" */
typedef struct DLManagedTensorVersioned {
  DLPackVersion version;
  void *manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned *self);
  uint64_t flags;
  DLTensor dl_tensor;
} DLManagedTensorVersioned;

#endif /* PPY_DLPACK_H */
