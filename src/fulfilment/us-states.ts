/**
 * Two-letter USPS codes rpmlab's address verification accepts as "a real US state code"
 * (issue text; spec 2.1 address fields). Decision: the 50 states, the District of Columbia and
 * the five inhabited territories USPS delivers to with domestic service (PR, GU, VI, AS, MP).
 * Not accepted: the freely associated states (FM, MH, PW) and the armed forces codes (AA, AE,
 * AP), whose addresses have no street number to check and which consumer carriers do not
 * serve — an integrator sending them gets Invalid and can confirm the address (spec 3).
 */
export const US_STATES: Readonly<Record<string, string>> = {
  AL: "Alabama",
  AK: "Alaska",
  AZ: "Arizona",
  AR: "Arkansas",
  CA: "California",
  CO: "Colorado",
  CT: "Connecticut",
  DE: "Delaware",
  FL: "Florida",
  GA: "Georgia",
  HI: "Hawaii",
  ID: "Idaho",
  IL: "Illinois",
  IN: "Indiana",
  IA: "Iowa",
  KS: "Kansas",
  KY: "Kentucky",
  LA: "Louisiana",
  ME: "Maine",
  MD: "Maryland",
  MA: "Massachusetts",
  MI: "Michigan",
  MN: "Minnesota",
  MS: "Mississippi",
  MO: "Missouri",
  MT: "Montana",
  NE: "Nebraska",
  NV: "Nevada",
  NH: "New Hampshire",
  NJ: "New Jersey",
  NM: "New Mexico",
  NY: "New York",
  NC: "North Carolina",
  ND: "North Dakota",
  OH: "Ohio",
  OK: "Oklahoma",
  OR: "Oregon",
  PA: "Pennsylvania",
  RI: "Rhode Island",
  SC: "South Carolina",
  SD: "South Dakota",
  TN: "Tennessee",
  TX: "Texas",
  UT: "Utah",
  VT: "Vermont",
  VA: "Virginia",
  WA: "Washington",
  WV: "West Virginia",
  WI: "Wisconsin",
  WY: "Wyoming",
  DC: "District of Columbia",
  PR: "Puerto Rico",
  GU: "Guam",
  VI: "U.S. Virgin Islands",
  AS: "American Samoa",
  MP: "Northern Mariana Islands",
};

/** True for an accepted code, in any letter case and ignoring surrounding spaces. */
export function isUsStateCode(text: string): boolean {
  return Object.hasOwn(US_STATES, text.trim().toUpperCase());
}
