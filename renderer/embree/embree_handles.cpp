#include "embree/embree_handles.h"

#include <stdexcept>

namespace rt {

EmbreeDevice::EmbreeDevice(const std::string& config) {
  m_device = rtcNewDevice(config.empty() ? nullptr : config.c_str());
  if (!m_device) {
    throw std::runtime_error("cannot create Embree device (error " + std::to_string(rtcGetDeviceError(nullptr)) + ")");
  }
  // No error callback: Embree keeps the first error per thread, and check() turns it into an
  // exception at a point of our choosing instead of inside an Embree call.
}

void EmbreeDevice::check(const char* what) const {
  RTCError err = rtcGetDeviceError(m_device);
  if (err != RTC_ERROR_NONE) {
    throw std::runtime_error(std::string("Embree error ") + std::to_string(static_cast<int>(err)) + " during " + what);
  }
}

EmbreeScene::EmbreeScene(const EmbreeDevice& device) {
  m_scene = rtcNewScene(device.get());
  if (!m_scene) throw std::runtime_error("cannot create Embree scene");
}

}  // namespace rt
