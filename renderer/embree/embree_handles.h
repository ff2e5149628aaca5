// Move-only RAII owners for Embree's reference-counted handles.
// Ownership: a Device owns the RTCDevice; every Scene holds its own reference to the device
// (Embree retains it internally), so a Scene may outlive the Device object that created it.
// Geometries are released right after rtcAttachGeometry, because the scene then holds them.
#pragma once

#include <embree3/rtcore.h>

#include <string>
#include <utility>

namespace rt {

class EmbreeDevice {
 public:
  // `config` is Embree's device string (e.g. "threads=2"); errors become std::runtime_error.
  explicit EmbreeDevice(const std::string& config = "");
  ~EmbreeDevice() { if (m_device) rtcReleaseDevice(m_device); }
  EmbreeDevice(EmbreeDevice&& o) noexcept : m_device(std::exchange(o.m_device, nullptr)) {}
  EmbreeDevice& operator=(EmbreeDevice&& o) noexcept { std::swap(m_device, o.m_device); return *this; }
  EmbreeDevice(const EmbreeDevice&) = delete;
  EmbreeDevice& operator=(const EmbreeDevice&) = delete;

  RTCDevice get() const { return m_device; }
  // Throws std::runtime_error if Embree recorded an error since the last check.
  void check(const char* what) const;

 private:
  RTCDevice m_device = nullptr;
};

class EmbreeScene {
 public:
  EmbreeScene() = default;
  explicit EmbreeScene(const EmbreeDevice& device);
  ~EmbreeScene() { if (m_scene) rtcReleaseScene(m_scene); }
  EmbreeScene(EmbreeScene&& o) noexcept : m_scene(std::exchange(o.m_scene, nullptr)) {}
  EmbreeScene& operator=(EmbreeScene&& o) noexcept { std::swap(m_scene, o.m_scene); return *this; }
  EmbreeScene(const EmbreeScene&) = delete;
  EmbreeScene& operator=(const EmbreeScene&) = delete;

  RTCScene get() const { return m_scene; }

 private:
  RTCScene m_scene = nullptr;
};

}  // namespace rt
