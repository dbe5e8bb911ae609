/* lavapipe26-check: through the Vulkan loader (VK_DRIVER_FILES names the driver), prints each device
 * with the cooperative-matrix configurations it offers; exit status 1 unless one offers some.
 * Debian 12's Vulkan headers (1.3.239) predate VK_KHR_cooperative_matrix: its types are declared
 * here, as the specification gives them. */
#include <stdio.h>
#include <string.h>
#include <vulkan/vulkan.h>

#define COOPERATIVE_MATRIX_EXTENSION "VK_KHR_cooperative_matrix"
#define STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR ((VkStructureType)1000506001)

typedef struct {
  VkStructureType sType;
  void* pNext;
  uint32_t MSize, NSize, KSize;
  int32_t AType, BType, CType, ResultType; /* VkComponentTypeKHR */
  VkBool32 saturatingAccumulation;
  int32_t scope; /* VkScopeKHR */
} CooperativeMatrixProperties;

typedef VkResult(VKAPI_PTR* GetCooperativeMatrixProperties)(VkPhysicalDevice, uint32_t*, CooperativeMatrixProperties*);

static const char* component(int32_t type) {
  static const char* const names[] = {"float16", "float32", "float64", "sint8",  "sint16", "sint32",
                                      "sint64",  "uint8",   "uint16",  "uint32", "uint64"};
  return type >= 0 && type < (int32_t)(sizeof names / sizeof *names) ? names[type] : "other";
}

static const char* scope(int32_t s) {
  switch (s) {
    case 1: return "device";
    case 2: return "workgroup";
    case 3: return "subgroup";
    case 5: return "queue-family";
    default: return "other";
  }
}

static int has_extension(VkPhysicalDevice device, const char* name) {
  VkExtensionProperties extensions[512];
  uint32_t count = sizeof extensions / sizeof *extensions;
  if (vkEnumerateDeviceExtensionProperties(device, NULL, &count, extensions) < 0) return 0;
  for (uint32_t i = 0; i < count; ++i)
    if (strcmp(extensions[i].extensionName, name) == 0) return 1;
  return 0;
}

/* Prints the device's configurations; returns how many. */
static uint32_t list_configurations(VkInstance instance, VkPhysicalDevice device) {
  VkPhysicalDeviceDriverProperties driver = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceSubgroupProperties subgroup = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES,
                                                 .pNext = &driver};
  VkPhysicalDeviceProperties2 properties = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                            .pNext = &subgroup};
  vkGetPhysicalDeviceProperties2(device, &properties);
  printf("%s: %s %s, subgroup size %u\n", properties.properties.deviceName, driver.driverName, driver.driverInfo,
         subgroup.subgroupSize);
  if (!has_extension(device, COOPERATIVE_MATRIX_EXTENSION)) {
    printf("  no %s\n", COOPERATIVE_MATRIX_EXTENSION);
    return 0;
  }
  GetCooperativeMatrixProperties get = (GetCooperativeMatrixProperties)vkGetInstanceProcAddr(
      instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR");
  CooperativeMatrixProperties configs[64];
  uint32_t count = sizeof configs / sizeof *configs;
  for (uint32_t i = 0; i < count; ++i)
    configs[i] = (CooperativeMatrixProperties){.sType = STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR};
  if (!get || get(device, &count, configs) < 0) {
    printf("  %s listed, its properties cannot be queried\n", COOPERATIVE_MATRIX_EXTENSION);
    return 0;
  }
  for (uint32_t i = 0; i < count; ++i) {
    const CooperativeMatrixProperties* c = &configs[i];
    printf("  %ux%ux%u %s: A %s, B %s, C %s, result %s%s\n", c->MSize, c->NSize, c->KSize, scope(c->scope),
           component(c->AType), component(c->BType), component(c->CType), component(c->ResultType),
           c->saturatingAccumulation ? ", saturating" : "");
  }
  return count;
}

int main(void) {
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .apiVersion = VK_API_VERSION_1_3};
  VkInstanceCreateInfo info = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
  VkInstance instance;
  VkResult r = vkCreateInstance(&info, NULL, &instance);
  if (r != VK_SUCCESS) {
    printf("vkCreateInstance failed (%d)\n", r);
    return 1;
  }
  VkPhysicalDevice devices[16];
  uint32_t count = sizeof devices / sizeof *devices;
  uint32_t configurations = 0;
  if (vkEnumeratePhysicalDevices(instance, &count, devices) < 0) count = 0;
  for (uint32_t i = 0; i < count; ++i) configurations += list_configurations(instance, devices[i]);
  if (count == 0) printf("no Vulkan device\n");
  vkDestroyInstance(instance, NULL);
  return configurations ? 0 : 1;
}
