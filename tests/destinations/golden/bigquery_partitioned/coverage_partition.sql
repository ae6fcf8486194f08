SELECT CASE WHEN `day` >= CAST(%s AS DATE) THEN 1 ELSE 0 END AS `_co_recent`, COUNT(*), COUNT(`actor_login`) FROM `acme-analytics-42`.`raw_events`.`events` WHERE `day` >= CAST(%s AS DATE) GROUP BY 1
